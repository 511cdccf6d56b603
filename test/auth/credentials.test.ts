import t, { type Test } from 'tap'
import { hashApiKey } from '../../src/auth/secrets.js'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import { openStore } from '../../src/store/open.js'
import { assertProblem, bearer, body, buildTestApp, logCollector, pointers, post, testStoreOptions, type Json } from '../helper.js'

const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const form = 'application/x-www-form-urlencoded'

t.test('API keys: created by admins, shown once, stored as a hash, revocable', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  const created = await post(app, '/v1/api-keys', { name: 'reporting', scopes: ['projects:read'] })
  t.equal(created.statusCode, 201)
  const key = body(created)
  t.match(key, { id: Number, name: 'reporting', scopes: ['projects:read'], prefix: /^rsy_/, createdAt: String, expiresAt: null, lastUsedAt: null, key: /^rsy_[A-Za-z0-9_-]{43}$/ })
  t.ok(key.key.startsWith(key.prefix))
  t.equal(created.headers.location, `/v1/api-keys/${key.id}`)
  const located = await app.inject({ method: 'GET', url: created.headers.location as string })
  t.equal(located.statusCode, 200, 'Location names the key')
  const { key: secret, ...view } = key
  t.ok(secret)
  t.same(body(located), view, 'the same key without the key itself')
  assertProblem(t, await app.inject({ method: 'GET', url: `/v1/api-keys/${(key.id as number) + 1000}` }), 404)
  assertProblem(t, await app.inject({ method: 'GET', url: created.headers.location as string, headers: { authorization: bearer({ sub: 'u', scope: 'projects:read' }) } }), 401, 'insufficient-scope')

  const authorization = `Bearer ${key.key as string}`
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization } })).statusCode, 200, 'the key authenticates')
  const write = await app.inject({ method: 'POST', url: '/v1/projects', headers: { authorization, 'content-type': 'application/json' }, payload: '{"name":"x"}' })
  assertProblem(t, write, 401, 'insufficient-scope')

  // The last use is written after the request is answered (at most once a minute, never holding the request up), so it may land a moment later.
  const listed = await keysOnceUsed(app)
  t.equal(listed.length, 1)
  t.notOk('key' in listed[0], 'lists never show the key')
  t.match(listed[0].lastUsedAt, /^\d{4}-/, 'last use is recorded')

  const stored = await app.store.credentials.findApiKey(hashApiKey(key.key))
  t.equal(stored?.id, key.id, 'stored under its SHA-256 hash')
  t.notMatch(JSON.stringify(stored), key.key, 'the key itself is not stored')
  t.notMatch(JSON.stringify(logs.lines), key.key.slice(4), 'nor logged')

  t.equal((await app.inject({ method: 'DELETE', url: `/v1/api-keys/${key.id}` })).statusCode, 204)
  const revoked = await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization } })
  assertProblem(t, revoked, 401, 'invalid-token')
  t.match(body(revoked).detail, /revoked/)
  assertProblem(t, await app.inject({ method: 'DELETE', url: `/v1/api-keys/${key.id}` }), 404)
  assertProblem(t, await app.inject({ method: 'GET', url: `/v1/api-keys/${key.id}` }), 404) // a revoked key is gone
  t.same(body(await app.inject({ method: 'GET', url: '/v1/api-keys' })), [])
})

t.test('API keys: expiry, bad scopes, admin only', async t => {
  const app = await buildTestApp(t)
  const expiring = await app.store.credentials.createApiKey({ name: 'old', prefix: 'rsy_expired0', hash: hashApiKey('rsy_expired-key'), scopes: ['admin'], expiresAt: '2020-01-01T00:00:00.000Z' })
  t.ok(expiring.id)
  const expired = await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: 'Bearer rsy_expired-key' } })
  assertProblem(t, expired, 401, 'invalid-token')
  t.match(body(expired).detail, /expired/)

  const past = assertProblem(t, await post(app, '/v1/api-keys', { name: 'x', scopes: ['admin'], expiresAt: '2020-01-01T00:00:00Z' }), 400)
  t.equal(past.errors[0].pointer, '/expiresAt')
  const leap = assertProblem(t, await post(app, '/v1/api-keys', { name: 'x', scopes: ['admin'], expiresAt: '2999-12-31T23:59:60Z' }), 400, 'validation')
  t.same(leap.errors, [{ in: 'body', pointer: '/expiresAt', detail: 'must be an RFC 3339 date-time such as 2026-01-01T00:00:00Z, precise to the millisecond at most, without a leap second' }], 'a leap second is valid RFC 3339 but no Date: a 400, not a 500')
  const offset = await post(app, '/v1/api-keys', { name: 'x', scopes: ['admin'], expiresAt: '2999-01-01T05:30:00+05:30' })
  t.equal(body(offset).expiresAt, '2999-01-01T00:00:00.000Z', 'kept as the same instant in UTC')
  const future = await post(app, '/v1/api-keys', { name: 'x', scopes: ['admin'], expiresAt: '2999-01-01T00:00:00Z' })
  t.equal(body(future).expiresAt, '2999-01-01T00:00:00.000Z')
  const typo = assertProblem(t, await post(app, '/v1/api-keys', { name: 'x', scopes: ['projects:read', 'project:write'] }), 400)
  t.same(typo.errors, [{ in: 'body', pointer: '/scopes/1', detail: '"project:write" is not a scope of this service' }])
  const typos = assertProblem(t, await post(app, '/v1/api-keys', { name: 'x', scopes: ['project:read', 'project:write'] }), 400)
  t.equal(typos.detail, '2 values in the body are invalid', 'says where, as the schema\'s own 400s do')
  const everything = assertProblem(t, await post(app, '/v1/api-keys', { name: 5, scopes: ['admin', 'bogus:read'], expiresAt: '2020-01-01T00:00:00Z' }), 400, 'validation')
  t.same(pointers(everything), ['/expiresAt', '/name', '/scopes/1'], 'the schema\'s faults, an unknown scope and a past expiry in one 400')
  const client = assertProblem(t, await post(app, '/v1/clients', { scopes: ['nope'] }), 400, 'validation')
  t.same(client.errors, [{ in: 'body', pointer: '/name', detail: 'is required' }, { in: 'body', pointer: '/scopes/0', detail: '"nope" is not a scope of this service' }])
  assertProblem(t, await post(app, '/v1/api-keys', ['admin']), 400)
  assertProblem(t, await post(app, '/v1/api-keys', { name: 'x', scopes: [] }), 400)
  assertProblem(t, await post(app, '/v1/api-keys', { name: 'x', scopes: ['admin'], key: 'rsy_mine' }), 400)
  const user = bearer({ sub: 'u', scope: 'projects:read projects:write' })
  assertProblem(t, await post(app, '/v1/api-keys', { name: 'x', scopes: ['admin'] }, { authorization: user }), 401, 'insufficient-scope')
})

t.test('client credentials: Basic at the token endpoint, scopes cut to the client\'s', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/clients', { name: 'billing', scopes: ['projects:read', 'notes:read', 'notes:write'] })
  t.equal(created.statusCode, 201)
  const client = body(created)
  t.match(client, { id: Number, clientId: /^rsyc_/, name: 'billing', scopes: ['projects:read', 'notes:read', 'notes:write'], createdAt: String, clientSecret: String })
  const stored = (await app.store.credentials.findClient(client.clientId))!
  t.match(stored.secretHash, /^[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/, 'a salted slow hash')
  t.notMatch(stored.secretHash, client.clientSecret)
  t.notOk('clientSecret' in body(await app.inject({ method: 'GET', url: '/v1/clients' }))[0])
  t.equal(created.headers.location, `/v1/clients/${client.id as number}`)
  const { clientSecret, ...view } = client
  t.ok(clientSecret)
  t.same(body(await app.inject({ method: 'GET', url: created.headers.location as string })), view, 'Location names the client, shown without its secret')

  const authorization = basic(client.clientId, client.clientSecret)
  const token = await app.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization, 'content-type': form }, payload: 'grant_type=client_credentials' })
  t.equal(token.statusCode, 200)
  t.equal(token.headers['cache-control'], 'no-store')
  t.equal(token.headers.pragma, 'no-cache')
  const granted = body(token)
  t.match(granted, { access_token: String, token_type: 'Bearer', expires_in: 3600, scope: 'projects:read notes:read notes:write' })

  const asClient = `Bearer ${granted.access_token as string}`
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: asClient } })).statusCode, 200)
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/tasks', headers: { authorization: asClient } }), 401, 'insufficient-scope')
  const note = body(await post(app, '/v1/notes', { name: 'from a client' }, { authorization: asClient }))
  t.equal(note.owner, `client:${client.clientId as string}`, 'the client\'s own subject owns what it creates')

  const json = await app.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization, 'content-type': 'application/json' }, payload: { grant_type: 'client_credentials', scope: 'notes:read tasks:write admin' } })
  t.equal(body(json).scope, 'notes:read', 'requested scopes are cut to the client\'s')
  const none = await app.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization, 'content-type': form }, payload: 'grant_type=client_credentials&scope=admin' })
  t.equal(assertProblem(t, none, 400, 'oauth-invalid-scope').error, 'invalid_scope')
})

t.test('token endpoint errors follow RFC 6749 §5.2, as problems', async t => {
  const app = await buildTestApp(t)
  const client = body(await post(app, '/v1/clients', { name: 'c', scopes: ['projects:read'] }))
  const good = basic(client.clientId, client.clientSecret)
  const request = async (authorization: string | undefined, payload: string, type = form) =>
    await app.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization, 'content-type': type }, payload })

  for (const [name, authorization] of [['no credentials', undefined], ['wrong secret', basic(client.clientId, 'wrong')], ['unknown client', basic('rsyc_nobody', client.clientSecret)], ['a bearer token', bearer({ sub: 'x', scope: 'admin' })], ['garbage', 'Basic !!!']] as const) {
    const response = await request(authorization, 'grant_type=client_credentials')
    const problem = assertProblem(t, response, 401, 'oauth-invalid-client')
    t.equal(problem.error, 'invalid_client', name)
    t.equal(response.headers['www-authenticate'], 'Basic realm="token"')
  }
  t.equal(assertProblem(t, await request(good, 'grant_type=password&username=a'), 400).error, 'unsupported_grant_type')
  t.equal(assertProblem(t, await request(good, 'scope=projects:read'), 400).error, 'invalid_request')
  t.equal(assertProblem(t, await request(good, 'grant_type=client_credentials&grant_type=client_credentials'), 400).error, 'invalid_request')
  assertProblem(t, await request(good, 'grant_type=client_credentials', 'text/plain'), 415)

  t.equal((await app.inject({ method: 'DELETE', url: `/v1/clients/${client.id as number}` })).statusCode, 204)
  t.equal(assertProblem(t, await request(good, 'grant_type=client_credentials'), 401).error, 'invalid_client', 'a revoked client gets no token')
})

t.test('token endpoint: Basic credentials are form-urlencoded (RFC 6749 §2.3.1); a scope must be a string', async t => {
  // An app of its own: the endpoint's stricter limit (TOKEN_RATE_LIMIT_MAX) is spent by the test above.
  const app = await buildTestApp(t)
  const client = body(await post(app, '/v1/clients', { name: 'c', scopes: ['projects:read'] }))
  const request = async (authorization: string, payload: string, type = form) =>
    await app.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization, 'content-type': type }, payload })
  const escaped = basic((client.clientId as string).replace('_', '%5F'), client.clientSecret)
  t.equal((await request(escaped, 'grant_type=client_credentials')).statusCode, 200, 'a percent-encoded client_id is decoded')
  const malformed = await request(basic('%zz', client.clientSecret), 'grant_type=client_credentials')
  t.match(assertProblem(t, malformed, 401, 'oauth-invalid-client'), { error: 'invalid_client', detail: 'the client credentials are not properly encoded' })
  const scopeNumber = await request(basic(client.clientId, client.clientSecret), JSON.stringify({ grant_type: 'client_credentials', scope: 5 }), 'application/json')
  t.match(assertProblem(t, scopeNumber, 400, 'oauth-invalid-request'), { error: 'invalid_request', detail: 'scope must be a space-separated string' })
})

t.test('the token endpoint has no representation: any If-Match is 412 and issues nothing, after its other errors', async t => {
  const app = await buildTestApp(t)
  const client = body(await post(app, '/v1/clients', { name: 'conditional', scopes: ['projects:read'] }))
  const good = basic(client.clientId, client.clientSecret)
  const request = async (headers: Record<string, string>, payload = 'grant_type=client_credentials') =>
    await app.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization: good, 'content-type': form, ...headers }, payload })

  for (const ifMatch of ['*', '"abc"', 'W/"abc"']) {
    const refused = await request({ 'if-match': ifMatch })
    const problem = assertProblem(t, refused, 412, 'precondition-failed')
    t.equal(problem.detail, '/v1/auth/token has no representation for If-Match to name, so If-Match cannot hold (RFC 9110 §13.1.1); no token was issued', ifMatch)
    t.notOk('access_token' in problem)
    t.equal(refused.headers['cache-control'], 'no-store')
  }
  t.equal(assertProblem(t, await request({ 'if-match': '*', authorization: basic(client.clientId, 'wrong') }), 401).error, 'invalid_client', 'a client that fails to authenticate learns only that')
  t.equal(assertProblem(t, await request({ 'if-match': '*' }, 'grant_type=password'), 400).error, 'unsupported_grant_type', 'a bad request is told as such first')
  const holding: Array<Record<string, string>> = [{ 'if-none-match': '*' }, { 'if-none-match': '"abc"' }, { 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' }]
  for (const headers of holding) {
    const issued = await request(headers)
    t.equal(issued.statusCode, 200, `${JSON.stringify(headers)} holds where nothing exists`)
    t.type(body(issued).access_token, 'string')
  }
})

/** The API keys as listed once the first shows a last use, or after 5 s as they are then. */
async function keysOnceUsed (app: Awaited<ReturnType<typeof buildTestApp>>): Promise<Json> {
  const deadline = Date.now() + 5000
  for (;;) {
    const listed = body(await app.inject({ method: 'GET', url: '/v1/api-keys' }))
    if (listed[0]?.lastUsedAt !== null || Date.now() > deadline) return listed
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

/**
 * An app with the given API_KEY_CACHE_TTL, a key that has been used once, and
 * a way to revoke it through a second store on the same database (standing in
 * for the CLI or another process); `use` answers a request with the key.
 */
async function keyRevokedElsewhere (t: Test, ttl: string) {
  const app = await buildTestApp(t, { env: { API_KEY_CACHE_TTL: ttl } })
  const elsewhere = await openStore(buildModel(resources), await testStoreOptions(t))
  t.teardown(async () => { await elsewhere.close() })
  const key = body(await post(app, '/v1/api-keys', { name: `ttl ${ttl}`, scopes: ['projects:read'] }))
  const use = async () => await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: `Bearer ${key.key as string}` } })
  t.equal((await use()).statusCode, 200)
  t.ok(await elsewhere.credentials.revokeApiKey(key.id))
  return use
}

t.test('a key revoked elsewhere (CLI, another process) stops working within API_KEY_CACHE_TTL', async t => {
  const use = await keyRevokedElsewhere(t, '1s')
  t.equal((await use()).statusCode, 200, 'still reused inside the TTL')
  await new Promise(resolve => setTimeout(resolve, 1100))
  const revoked = await use()
  assertProblem(t, revoked, 401, 'invalid-token')
  t.match(body(revoked).detail, /revoked/)
})

t.test('API_KEY_CACHE_TTL=0 looks every key up on every request', async t => {
  const use = await keyRevokedElsewhere(t, '0')
  assertProblem(t, await use(), 401, 'invalid-token')
})
