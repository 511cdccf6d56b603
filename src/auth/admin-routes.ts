/**
 * Admin collections for credentials: /v1/api-keys and /v1/clients. The key or
 * client secret appears once, in the create response; lists never show it.
 * Both need the admin scope.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { ResourceNotFound, type ProblemIssue } from '../errors.js'
import { bodyMembers, refuseWithAll } from '../http/attached-validation.js'
import { canonicalDateTime } from '../http/date-time.js'
import { Id } from '../resources/derive.js'
import { EXAMPLE_ID, scopeProblem } from '../resources/problem-examples.js'
import { ADMIN_ITEM_HEADERS, ADMIN_ITEM_READ, ADMIN_LIST_READ, ADMIN_REMOVE, jsonResponse, listProblems, LOCATION, notModified, problemResponses } from '../resources/responses.js'
import type { ApiKeyRecord, ClientRecord } from '../store/credentials.js'
import type { LiveItems } from '../store/live-items.js'
import { ADMIN_PAGE_HEADERS, adminPage, adminPageQuery } from './admin-pages.js'
import { changedSince, checkBeforeRemoving, sendAdminCreated, sendAdminItem, sendAdminList } from './admin-conditional.js'
import { ADMIN_SCOPE } from './authenticate.js'
import { scopeNote, securityFor } from './openapi-security.js'
import { hashClientSecret, newApiKey, newClientCredentials } from './secrets.js'

const Scope = Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z][a-z0-9-]*(:(read|write))?$' })
const Scopes = Type.Array(Scope, { minItems: 1, maxItems: 100, uniqueItems: true })
const Timestamp = Type.String({ format: 'date-time' })
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])

/** What the document shows: an API key as listed, and as created (the only time the key is shown). */
const API_KEY_EXAMPLE = { id: 3, name: 'reporting job', scopes: ['projects:read', 'tasks:read'], prefix: 'rsy_Xq3vN0bL', createdAt: '2026-11-02T09:15:00.000Z', expiresAt: null, lastUsedAt: '2026-11-20T17:42:10.000Z' }
const CLIENT_EXAMPLE = { id: 1, clientId: 'rsyc_cB0gRGcZEandoAFI', name: 'billing service', scopes: ['projects:read'], createdAt: '2026-11-02T09:20:00.000Z' }

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

const IdParams = Type.Object({ id: Id }, { additionalProperties: false })

export function apiKeyView (record: ApiKeyRecord): Static<typeof ApiKey> {
  const { id, name, scopes, prefix, createdAt } = record
  return { id, name, scopes: [...scopes], prefix, createdAt, expiresAt: record.expiresAt ?? null, lastUsedAt: record.lastUsedAt ?? null }
}

export function clientView (record: ClientRecord): Static<typeof Client> {
  const { id, clientId, name, scopes, createdAt } = record
  return { id, clientId, name, scopes: [...scopes], createdAt }
}

export interface AdminRoutesOptions {
  /** Every scope the service knows, so a typo in a granted scope is refused. */
  readonly knownScopes: readonly string[]
  /** The most items a page of a list may ask for (MAX_PAGE_LIMIT). */
  readonly maxLimit: number
}

/** The 403 of every admin route. */
export const ADMIN_FORBIDDEN = scopeProblem(ADMIN_SCOPE)

/** 404: no admin item (`noun`: API key, OAuth client, webhook subscription) with that id. */
export const noSuchItem = (noun: string, id: number): Error => new ResourceNotFound(`no ${noun} with id ${id}`)

/** The OpenAPI operation of an admin route: tagged, described with the scope it needs. */
export function adminOperation (tag: string, operationId: string, summary: string, extra: Record<string, unknown>): Record<string, unknown> {
  return { tags: [tag], operationId, summary, description: `${summary}. ${scopeNote(ADMIN_SCOPE)}`, security: securityFor(ADMIN_SCOPE), ...extra }
}

export interface AdminCreate {
  /** `$id` of the request body's schema. */
  readonly body: string
  /** `$id` of the 201's schema, which holds the secret shown only then. */
  readonly created: string
  /** The 201's description. */
  readonly shown: string
}

/** The operation of an admin create: its body, a 201 with Location, and its refusals. */
export function adminCreateOperation (tag: string, operationId: string, summary: string, { body, created, shown }: AdminCreate): Record<string, unknown> {
  return adminOperation(tag, operationId, summary, {
    body: Type.Ref(body),
    response: { 201: jsonResponse(shown, Type.Ref(created), { ...LOCATION, ...ADMIN_ITEM_HEADERS }), ...problemResponses([400, 401, ADMIN_FORBIDDEN, 413, 415, 429]) }
  })
}

/** Route config of admin routes: the scope, and for writes the one body type they take. */
export const adminConfig = { scope: ADMIN_SCOPE }
export const adminWriteConfig = { ...adminConfig, accepts: ['application/json'] }

export async function adminRoutes (app: FastifyInstance, { knownScopes, maxLimit }: AdminRoutesOptions): Promise<void> {
  /** Every scope of a body that this service does not have (read from a body that may have failed its schema). */
  const unknownScopes = (scopes: unknown): ProblemIssue[] => !Array.isArray(scopes)
    ? []
    : scopes.flatMap((scope: unknown, index) => typeof scope === 'string' && !knownScopes.includes(scope)
      ? [{ in: 'body' as const, pointer: `/scopes/${index}`, detail: `"${scope}" is not a scope of this service` }]
      : [])

  /** What an API key's expiry must be beyond a date-time the service can store (the schema's to check): in the future. */
  const expiryIssues = (expiresAt: unknown): ProblemIssue[] => {
    const expiry = typeof expiresAt === 'string' ? canonicalDateTime(expiresAt) : undefined
    return expiry !== undefined && Date.parse(expiry) <= Date.now() ? [{ in: 'body', pointer: '/expiresAt', detail: 'must be in the future' }] : []
  }

  app.post('/api-keys', {
    config: adminWriteConfig,
    // The handler's own checks (scopes, expiry) join the schema's issues in one 400.
    attachValidation: true,
    schema: adminCreateOperation('api-keys', 'createApiKey', 'Create an API key', { body: 'ApiKeyCreate', created: 'ApiKeyCreated', shown: 'The key, shown only now.' })
  }, async function createApiKey (request, reply) {
    const { scopes, expiresAt } = bodyMembers(request)
    refuseWithAll(request, 'body', [...unknownScopes(scopes), ...expiryIssues(expiresAt)])
    const body = request.body as Static<typeof ApiKeyCreate>
    const { key, prefix, hash } = newApiKey()
    // The schema's date-time format took only an expiry the stored form holds (date-time.ts).
    const record = await app.store.credentials.createApiKey({
      name: body.name, prefix, hash, scopes: body.scopes, ...(body.expiresAt === undefined ? {} : { expiresAt: canonicalDateTime(body.expiresAt)! })
    })
    return await sendAdminCreated(reply, `/v1/api-keys/${record.id}`, apiKeyView(record), { key })
  })

  credentialRoutes(app, {
    path: '/api-keys',
    tag: 'api-keys',
    noun: 'API key',
    plural: 'ApiKeys',
    singular: 'ApiKey',
    schema: adminOperation,
    config: adminConfig,
    items: app.store.credentials.apiKeys,
    view: apiKeyView,
    maxLimit,
    revoke: async id => await app.store.credentials.revokeApiKey(id),
    revoked: 'Revoked: this process refuses the key at once, every other process within API_KEY_CACHE_TTL (5 s by default).'
  })

  app.post('/clients', {
    config: adminWriteConfig,
    attachValidation: true,
    schema: adminCreateOperation('clients', 'createClient', 'Create an OAuth client', { body: 'ClientCreate', created: 'ClientCreated', shown: 'The client and its secret, shown only now.' })
  }, async function createClient (request, reply) {
    refuseWithAll(request, 'body', unknownScopes(bodyMembers(request).scopes))
    const body = request.body as Static<typeof ClientCreate>
    const { clientId, clientSecret } = newClientCredentials()
    const record = await app.store.credentials.createClient({ clientId, name: body.name, scopes: body.scopes, secretHash: await hashClientSecret(clientSecret) })
    return await sendAdminCreated(reply, `/v1/clients/${record.id}`, clientView(record), { clientSecret })
  })

  credentialRoutes(app, {
    path: '/clients',
    tag: 'clients',
    noun: 'OAuth client',
    plural: 'Clients',
    singular: 'Client',
    schema: adminOperation,
    config: adminConfig,
    items: app.store.credentials.clients,
    view: clientView,
    maxLimit,
    revoke: async id => await app.store.credentials.revokeClient(id),
    revoked: 'Revoked: the client can get no more tokens.'
  })
}

export interface CredentialRoutes<T> {
  readonly path: string
  readonly tag: string
  readonly noun: string
  readonly plural: string
  readonly singular: string
  readonly schema: (tag: string, operationId: string, summary: string, extra: Record<string, unknown>) => Record<string, unknown>
  readonly config: { scope: string }
  /** The collection's live items, and how a GET shows one. */
  readonly items: LiveItems<T>
  readonly view: (item: T) => object
  readonly maxLimit: number
  readonly revoke: (id: number) => Promise<boolean>
  readonly revoked: string
}

/**
 * GET {path} (every credential not revoked), GET {path}/{id} (one, which the
 * create's Location names) and DELETE {path}/{id} (revoke), alike for keys,
 * clients and webhook subscriptions (whose secrets are also shown only once).
 */
export function credentialRoutes<T> (app: FastifyInstance, options: CredentialRoutes<T>): void {
  const { path, tag, noun, plural, singular, schema, config, items, view } = options
  const aNoun = `${/^[AEIOU]/i.test(noun) ? 'an' : 'a'} ${noun}`
  const itemProblems = problemResponses([400, 401, ADMIN_FORBIDDEN, { status: 404, error: noSuchItem(noun, EXAMPLE_ID) }, { status: 412, error: changedSince(noun) }, 429])
  const find = async ({ id }: { id: number }): Promise<object> => {
    const found = await items.get(id)
    if (found === undefined) throw noSuchItem(noun, id)
    return view(found)
  }
  app.get(path, {
    config,
    schema: schema(tag, `list${plural}`, `List ${noun}s`, {
      querystring: adminPageQuery(options.maxLimit),
      headers: ADMIN_LIST_READ,
      response: {
        200: jsonResponse(`The ${noun}s that are not revoked, in id order: every one, or a page of them.`, Type.Array(Type.Ref(singular)), ADMIN_PAGE_HEADERS),
        ...notModified(ADMIN_PAGE_HEADERS),
        ...listProblems([400, 401, ADMIN_FORBIDDEN, 429])
      }
    })
  }, async function listCredentials (request, reply) {
    return await sendAdminList(request, reply, async () => await adminPage(request, items, view))
  })
  app.get(`${path}/:id`, {
    config,
    schema: schema(tag, `get${singular}`, `Get ${aNoun}`, {
      params: IdParams,
      headers: ADMIN_ITEM_READ,
      response: { 200: jsonResponse(`The ${noun}, without its secret; 404 once revoked.`, Type.Ref(singular), ADMIN_ITEM_HEADERS), ...notModified(ADMIN_ITEM_HEADERS), ...itemProblems }
    })
  }, async function getCredential (request, reply) {
    return await sendAdminItem(request, reply, noun, await find(request.params as { id: number }))
  })
  app.delete(`${path}/:id`, {
    config,
    schema: schema(tag, `revoke${singular}`, `Revoke ${aNoun}`, {
      params: IdParams,
      headers: ADMIN_REMOVE,
      response: { 204: { description: options.revoked, type: 'null' }, ...itemProblems }
    })
  }, async function revokeCredential (request, reply) {
    const { id } = request.params as { id: number }
    // Read first only when a condition needs what the client saw: a plain revocation stays one statement.
    if (request.headers['if-match'] !== undefined || request.headers['if-none-match'] !== undefined) checkBeforeRemoving(request, noun, await find({ id }))
    if (!await options.revoke(id)) throw noSuchItem(noun, id)
    return await reply.code(204).send()
  })
}

export const adminSchemas = [ApiKey, ApiKeyCreate, ApiKeyCreated, Client, ClientCreate, ClientCreated]
