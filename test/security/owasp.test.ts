/**
 * The OWASP API Security Top 10 (2023), item by item, as real requests.
 * API6 (unrestricted access to sensitive business flows) has no test of its
 * own: the service has no purchase, sign-up or similar flow to automate, and
 * the flows that mint credentials are rate limited (API2) and admin-only (API5).
 */
import { generateKeyPairSync } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createSigner } from 'fast-jwt'
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { assertProblem, bearer, body, buildTestApp, post } from '../helper.js'

const alice = bearer({ sub: 'alice', scope: 'notes:read notes:write projects:read' })
const bob = bearer({ sub: 'bob', scope: 'notes:read notes:write' })

t.test('API1 broken object-level authorization: another owner\'s object is not there', async t => {
  const app = await buildTestApp(t)
  const note = body(await post(app, '/v1/notes', { name: 'private' }, { authorization: alice }))
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
    const response = await app.inject({ method, url: `/v1/notes/${note.id as number}`, headers: { authorization: bob }, ...(method === 'PUT' || method === 'PATCH' ? { payload: { name: 'mine now' } } : {}) })
    assertProblem(t, response, 404)
  }
  t.same(body(await app.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: bob } })), [])
  t.same(body(await app.inject({ method: 'GET', url: '/v1/notes?sort=-name&fields=name', headers: { authorization: bob } })), [])
})

t.test('API2 broken authentication: no, forged or expired credentials never pass', async t => {
  const app = await buildTestApp(t)
  const expired = bearer({ sub: 'x', scope: 'admin', exp: Math.floor(Date.now() / 1000) - 1 })
  const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x","scope":"admin","exp":9999999999}').toString('base64url')}.`
  for (const authorization of [undefined, expired, `Bearer ${none}`, 'Bearer rsy_forged', `Basic ${Buffer.from('a:b').toString('base64')}`]) {
    t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization } })).statusCode, 401)
  }
  const guesses = await buildTestApp(t, { env: { TOKEN_RATE_LIMIT_MAX: '3' } })
  const statuses = []
  for (let i = 0; i < 5; i++) {
    statuses.push((await guesses.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization: `Basic ${Buffer.from(`rsyc_a:guess${i}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' })).statusCode)
  }
  t.same(statuses, [401, 401, 401, 429, 429], 'guessing client secrets is rate limited')
})

t.test('API3 broken object property-level authorization: no mass assignment, no secret leaks', async t => {
  const app = await buildTestApp(t)
  const forged = await post(app, '/v1/notes', { name: 'n', owner: 'bob', id: 1, createdAt: '2000-01-01T00:00:00Z' }, { authorization: alice })
  t.same(body(forged).errors.map((issue: { pointer: string }) => issue.pointer).sort(), ['/createdAt', '/id', '/owner'])
  const key = body(await post(app, '/v1/api-keys', { name: 'k', scopes: ['admin'] }))
  const listed = JSON.stringify(body(await app.inject({ method: 'GET', url: '/v1/api-keys' })))
  t.notMatch(listed, key.key, 'an API key is never shown again')
  t.notMatch(listed, /hash/)
  const client = body(await post(app, '/v1/clients', { name: 'c', scopes: ['admin'] }))
  t.notMatch(JSON.stringify(body(await app.inject({ method: 'GET', url: '/v1/clients' }))), client.clientSecret)
})

t.test('API4 unrestricted resource consumption: every size and rate is bounded', async t => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '5', BODY_LIMIT: '4096' } })
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects?limit=1000' }), 400)
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', payload: JSON.stringify({ name: 'x'.repeat(5000) }), headers: { 'content-type': 'application/json' } }), 413)
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', payload: `{"name":"x","tags":${'['.repeat(50)}${']'.repeat(50)}}`, headers: { 'content-type': 'application/json' } }), 400)
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', payload: JSON.stringify({ name: 'x', tags: Array.from({ length: 21 }, () => 't') }), headers: { 'content-type': 'application/json' } }), 400)
  let last = 0
  for (let i = 0; i < 3; i++) last = (await app.inject({ method: 'GET', url: '/v1/projects' })).statusCode
  t.equal(last, 429, 'and requests per minute')
})

t.test('API5 broken function-level authorization: admin functions need admin', async t => {
  const app = await buildTestApp(t)
  for (const [method, url] of [['GET', '/v1/api-keys'], ['POST', '/v1/api-keys'], ['GET', '/v1/clients'], ['POST', '/v1/clients'], ['DELETE', '/v1/api-keys/1']] as const) {
    const response = await app.inject({ method, url, headers: { authorization: alice, 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: { name: 'x', scopes: ['admin'] } } : {}) })
    assertProblem(t, response, 401, 'insufficient-scope')
  }
  assertProblem(t, await post(app, '/v1/projects', { name: 'x' }, { authorization: alice }), 401, 'insufficient-scope')
})

t.test('API7 server-side request forgery: the service fetches only the configured JWKS URL', async t => {
  const app = await buildTestApp(t)
  const response = await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: `Bearer ${Buffer.from('{"alg":"RS256","jku":"http://169.254.169.254/"}').toString('base64url')}.e30.x` } })
  t.equal(response.statusCode, 401, 'a token cannot point the service at a key URL of its choosing (jku / x5u are ignored)')
})

t.test('API8 security misconfiguration: hardened headers, no internals in errors, CORS closed by default', async t => {
  const app = await buildTestApp(t)
  const response = await app.inject({ method: 'GET', url: '/v1/projects/abc', headers: { origin: 'https://evil.example' } })
  t.equal(response.headers['x-content-type-options'], 'nosniff')
  t.notOk(response.headers['x-powered-by'])
  t.notOk(response.headers['access-control-allow-origin'])
  t.notMatch(response.body, /at .*\(|node_modules|SELECT/)
  t.equal(response.headers['cache-control'], 'no-store')
})

t.test('API9 improper inventory management: every route is documented, unknown versions do not exist', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const documented = new Set(Object.keys(document.paths))
  for (const path of ['/v1/projects', '/v1/projects/{id}', '/v1/projects/{id}/tasks', '/v1/tasks/{id}', '/v1/notes', '/v1/api-keys', '/v1/clients', '/v1/auth/token', '/health', '/ready']) {
    t.ok(documented.has(path), `${path} is documented`)
  }
  assertProblem(t, await app.inject({ method: 'GET', url: '/v0/projects' }), 404, 'unknown-version')
  assertProblem(t, await app.inject({ method: 'GET', url: '/v2/projects' }), 404, 'unknown-version')
})

t.test('API10 unsafe consumption of APIs: what a JWKS URL sends is bounded and checked like any input', async t => {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const good = { ...pair.publicKey.export({ format: 'jwk' }), kid: 'good' }
  const token = createSigner({ key: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), algorithm: 'ES256', kid: 'good' })({ sub: 'j', scope: 'projects:read', exp: Math.floor(Date.now() / 1000) + 60 })
  let cutOff = false
  const answers: Record<string, (response: ServerResponse) => void> = {
    // 64 MiB of key set, sent without a Content-Length: only reading it shows its size.
    '/endless': response => {
      response.write('{"keys":[')
      const chunk = `${JSON.stringify(good)},`.repeat(2000)
      let sent = 0
      const more = (): void => {
        while (sent < 64 * 1024 * 1024) {
          sent += chunk.length
          if (!response.write(chunk)) { response.once('drain', more); return }
        }
        response.end(`${JSON.stringify(good)}]}`)
      }
      response.once('close', () => { cutOff = !response.writableFinished })
      more()
    },
    '/not-json': response => response.end('<html>maintenance</html>'),
    '/no-keys': response => response.end('{"keys":5}'),
    '/junk-keys': response => response.end(JSON.stringify({ keys: [null, 7, 'key', [], { kty: 'RSA' }, { kty: 'nope', kid: 'good' }, good] }))
  }
  const server = createServer((request, response) => answers[request.url!]!(response))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const answer = async (path: string): Promise<LightMyRequestResponse> => {
    const app = await buildTestApp(t, { env: { JWT_JWKS_URL: `${base}${path}` } })
    return await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: `Bearer ${token}` } })
  }
  for (const path of ['/endless', '/not-json', '/no-keys']) assertProblem(t, await answer(path), 503, 'issuer-unreachable')
  t.ok(cutOff, 'the endless key set was not read to its end')
  t.equal((await answer('/junk-keys')).statusCode, 200, 'entries that are not keys are skipped, the real key still verifies')
})
