/**
 * Admin collections for credentials: /v1/api-keys and /v1/clients. The key or
 * client secret appears once, in the create response; lists never show it.
 * Both need the admin scope.
 */
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { ProblemIssue } from '../errors.js'
import { bodyMembers, refuseWithAll } from '../http/attached-validation.js'
import { canonicalDateTime } from '../http/date-time.js'
import { adminCollectionRoutes, adminCreateOperation, adminWriteConfig, checkBeforeAdminCreate } from './admin-collection.js'
import { sendAdminCreated } from './admin-conditional.js'
import { API_KEY_EXAMPLE, apiKeyView, CLIENT_EXAMPLE, clientView, type ApiKeyCreate, type ClientCreate } from './credential-schemas.js'
import { hashClientSecret, newApiKey, newClientCredentials } from './secrets.js'

export interface AdminRoutesOptions {
  /** Every scope the service knows, so a typo in a granted scope is refused. */
  readonly knownScopes: readonly string[]
  /** The most items a page of a list may ask for (MAX_PAGE_LIMIT). */
  readonly maxLimit: number
}

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
    schema: adminCreateOperation('api-keys', 'createApiKey', 'Create an API key', { path: '/api-keys', body: 'ApiKeyCreate', created: 'ApiKeyCreated', shown: 'The key, shown only now.', example: API_KEY_EXAMPLE })
  }, async function createApiKey (request, reply) {
    const { scopes, expiresAt } = bodyMembers(request)
    refuseWithAll(request, 'body', [...unknownScopes(scopes), ...expiryIssues(expiresAt)])
    await checkBeforeAdminCreate(request, app.store.credentials.apiKeys, apiKeyView)
    const body = request.body as Static<typeof ApiKeyCreate>
    const { key, prefix, hash } = newApiKey()
    // The schema's date-time format took only an expiry the stored form holds (date-time.ts).
    const record = await app.store.credentials.createApiKey({
      name: body.name, prefix, hash, scopes: body.scopes, ...(body.expiresAt === undefined ? {} : { expiresAt: canonicalDateTime(body.expiresAt)! })
    })
    return await sendAdminCreated(reply, `/v1/api-keys/${record.id}`, apiKeyView(record), { key })
  })

  adminCollectionRoutes(app, {
    path: '/api-keys',
    tag: 'api-keys',
    noun: 'API key',
    plural: 'ApiKeys',
    singular: 'ApiKey',
    items: app.store.credentials.apiKeys,
    view: apiKeyView,
    example: API_KEY_EXAMPLE,
    maxLimit,
    revoke: async id => await app.store.credentials.revokeApiKey(id),
    revoked: 'Revoked: this process refuses the key at once, every other process within API_KEY_CACHE_TTL (5 s by default).'
  })

  app.post('/clients', {
    config: adminWriteConfig,
    attachValidation: true,
    schema: adminCreateOperation('clients', 'createClient', 'Create an OAuth client', { path: '/clients', body: 'ClientCreate', created: 'ClientCreated', shown: 'The client and its secret, shown only now.', example: CLIENT_EXAMPLE })
  }, async function createClient (request, reply) {
    refuseWithAll(request, 'body', unknownScopes(bodyMembers(request).scopes))
    await checkBeforeAdminCreate(request, app.store.credentials.clients, clientView)
    const body = request.body as Static<typeof ClientCreate>
    const { clientId, clientSecret } = newClientCredentials()
    const record = await app.store.credentials.createClient({ clientId, name: body.name, scopes: body.scopes, secretHash: await hashClientSecret(clientSecret) })
    return await sendAdminCreated(reply, `/v1/clients/${record.id}`, clientView(record), { clientSecret })
  })

  adminCollectionRoutes(app, {
    path: '/clients',
    tag: 'clients',
    noun: 'OAuth client',
    plural: 'Clients',
    singular: 'Client',
    items: app.store.credentials.clients,
    view: clientView,
    example: CLIENT_EXAMPLE,
    maxLimit,
    revoke: async id => await app.store.credentials.revokeClient(id),
    revoked: 'Revoked: the client can get no more tokens.'
  })
}
