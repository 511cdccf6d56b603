/**
 * What the credential collections hold and show: API keys and OAuth clients as
 * listed (never with their secret), the bodies that create them, and the
 * answer of a create, the only time the key or client secret is shown.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Id } from '../resources/derive.js'
import { EXAMPLE_ID } from '../resources/header-examples.js'
import type { ApiKeyRecord, ClientRecord } from '../store/credentials.js'
import { NullableTimestamp, Timestamp } from './admin-collection.js'

const Scope = Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z][a-z0-9-]*(:(read|write))?$' })
const Scopes = Type.Array(Scope, { minItems: 1, maxItems: 100, uniqueItems: true })

/** What the document shows: an API key as listed, and as created (the only time the key is shown). */
export const API_KEY_EXAMPLE = { id: EXAMPLE_ID, name: 'reporting job', scopes: ['projects:read', 'tasks:read'], prefix: 'rsy_Xq3vN0bL', createdAt: '2026-11-02T09:15:00.000Z', expiresAt: null, lastUsedAt: '2026-11-20T17:42:10.000Z' }
export const CLIENT_EXAMPLE = { id: EXAMPLE_ID, clientId: 'rsyc_cB0gRGcZEandoAFI', name: 'billing service', scopes: ['projects:read'], createdAt: '2026-11-02T09:20:00.000Z' }

export const ApiKey = Type.Object({
  id: Id,
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it.' }),
  createdAt: Timestamp,
  expiresAt: NullableTimestamp,
  lastUsedAt: NullableTimestamp
}, { $id: 'ApiKey', additionalProperties: false, description: 'An API key, without the key itself.', examples: [API_KEY_EXAMPLE] })

export const ApiKeyCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  scopes: Scopes,
  expiresAt: Type.Optional(Timestamp)
}, { $id: 'ApiKeyCreate', additionalProperties: false, examples: [{ name: 'reporting job', scopes: ['projects:read', 'tasks:read'] }] })

export const ApiKeyCreated = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'The key: shown only in this response. Send it as `Authorization: Bearer <key>`.' })
}, { $id: 'ApiKeyCreated', additionalProperties: false, examples: [{ ...API_KEY_EXAMPLE, lastUsedAt: null, key: 'rsy_Xq3vN0bLr8Wm2kT5yH7cJ1fD4gS6aZ9pQeUoIiVxBn0' }] })

export const Client = Type.Object({
  id: Id,
  clientId: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  createdAt: Timestamp
}, { $id: 'Client', additionalProperties: false, description: 'An OAuth 2.0 client, without its secret.', examples: [CLIENT_EXAMPLE] })

export const ClientCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  scopes: Scopes
}, { $id: 'ClientCreate', additionalProperties: false, examples: [{ name: 'billing service', scopes: ['projects:read'] }] })

export const ClientCreated = Type.Object({
  ...Client.properties,
  clientSecret: Type.String({ description: 'The secret: shown only in this response.' })
}, { $id: 'ClientCreated', additionalProperties: false, examples: [{ ...CLIENT_EXAMPLE, clientSecret: 'h9llEfSQWds1bEUgl5qWyQUvDTsRtadMV-2gyU5VsQ8' }] })

export function apiKeyView (record: ApiKeyRecord): Static<typeof ApiKey> {
  const { id, name, scopes, prefix, createdAt } = record
  return { id, name, scopes: [...scopes], prefix, createdAt, expiresAt: record.expiresAt ?? null, lastUsedAt: record.lastUsedAt ?? null }
}

export function clientView (record: ClientRecord): Static<typeof Client> {
  const { id, clientId, name, scopes, createdAt } = record
  return { id, clientId, name, scopes: [...scopes], createdAt }
}

export const credentialSchemas = [ApiKey, ApiKeyCreate, ApiKeyCreated, Client, ClientCreate, ClientCreated]
