import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, createProject, post } from '../helper.js'

t.test('an Accept the service cannot satisfy is 406, in problem+json', async t => {
  const app = await buildTestApp(t)
  // The charset parameter some clients send is the one the answer has (it was a 406 when the service offered a bare application/json).
  for (const accept of ['application/json', '*/*', 'application/*', 'text/html, */*;q=0.1', 'application/problem+json, application/json;q=0.5', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', '*/*; charset=utf-8']) {
    t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { accept } })).statusCode, 200, accept)
  }
  for (const accept of ['text/html', 'application/xml', 'application/json;q=0', 'image/*', 'application/json; charset=iso-8859-1', 'application/json; version=2']) {
    const response = await app.inject({ method: 'GET', url: '/v1/projects', headers: { accept } })
    assertProblem(t, response, 406, 'not-acceptable')
  }
  t.equal((await app.inject({ method: 'GET', url: '/docs/', headers: { accept: 'text/html' } })).statusCode < 400, true, 'the HTML docs are not JSON')
})

t.test('an Accept that allows problem+json but not JSON is 406 where the answer would be JSON, before anything is written', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app, { name: 'negotiated' })
  const json = { 'content-type': 'application/json' }
  for (const accept of ['application/problem+json', 'application/json;q=0, */*', 'text/*, application/problem+json;q=0.1']) {
    for (const url of ['/v1/projects', `/v1/projects/${project.id}`, `/v1/projects/${project.id}/tasks`, '/v1/api-keys']) {
      const problem = assertProblem(t, await app.inject({ method: 'GET', url, headers: { accept } }), 406, 'not-acceptable')
      t.match(problem.detail, /application\/json, which the Accept header does not allow/, `GET ${url} with ${accept}`)
    }
    assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', headers: { ...json, accept }, payload: '{"name":"refused"}' }), 406)
    assertProblem(t, await app.inject({ method: 'PATCH', url: `/v1/projects/${project.id}`, headers: { ...json, accept }, payload: '{"budget":1}' }), 406)
  }
  t.same(body(await app.inject({ method: 'GET', url: '/v1/projects?name=refused' })), [], 'the refused POST created nothing')
  t.same(body(await app.inject({ method: 'GET', url: `/v1/projects/${project.id}` })), project, 'the refused PATCH changed nothing')

  const accept = 'application/problem+json'
  const minimal = await app.inject({ method: 'POST', url: '/v1/projects', headers: { ...json, accept, prefer: 'return=minimal' }, payload: '{"name":"minimal"}' })
  t.equal(minimal.statusCode, 201, 'a write asked to answer with no body goes ahead')
  t.equal(minimal.body, '')
  const deleted = await app.inject({ method: 'DELETE', url: `/v1/projects/${project.id}`, headers: { accept } })
  t.equal(deleted.statusCode, 204, 'a DELETE answers with no body')
  assertProblem(t, await app.inject({ method: 'DELETE', url: `/v1/projects/${project.id}`, headers: { accept } }), 404)
  assertProblem(t, await app.inject({ method: 'PUT', url: '/v1/projects', headers: { accept } }), 405)
  t.equal((await app.inject({ method: 'GET', url: '/health', headers: { accept } })).statusCode, 200, 'a health probe is not refused for its Accept')

  // Errors the client can read come first: only a success is refused.
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects', headers: { accept, authorization: undefined } }), 401)
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects?limit=0', headers: { accept } }), 400)
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects/0', headers: { accept } }), 400)
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', headers: { ...json, accept }, payload: '{"colour":"red"}' }), 400)
  const kept = await createProject(app, { name: 'kept' })
  assertProblem(t, await app.inject({ method: 'PATCH', url: `/v1/projects/${kept.id}`, headers: { ...json, accept }, payload: '{"budget":"lots"}' }), 400)
  assertProblem(t, await app.inject({ method: 'PUT', url: `/v1/projects/${kept.id}`, headers: { ...json, accept }, payload: '{"id":1}' }), 400)
  assertProblem(t, await app.inject({ method: 'POST', url: `/v1/projects/${kept.id}/tasks`, headers: { ...json, accept }, payload: '{"name":5}' }), 400)
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { ...json, accept }, payload: '{"name":5}' }), 400)
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', headers: { 'content-type': 'text/plain', accept }, payload: 'x' }), 415)
})

t.test('a read refused for its Accept still answers 404, 412 and 304 first, and its 406 carries none of the success headers', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app, { name: 'read' })
  const accept = 'application/problem+json'
  const read = await app.inject({ method: 'GET', url: `/v1/projects/${project.id}` })
  const etag = String(read.headers.etag)

  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects/999', headers: { accept } }), 404, 'not-found')
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects/999/tasks', headers: { accept } }), 404, 'not-found')
  assertProblem(t, await app.inject({ method: 'GET', url: `/v1/projects/${project.id}`, headers: { accept, 'if-match': '"stale"' } }), 412)
  const revalidated = await app.inject({ method: 'GET', url: `/v1/projects/${project.id}`, headers: { accept, 'if-none-match': etag } })
  t.equal(revalidated.statusCode, 304, 'a cached copy is still current: 304, no body to refuse')
  t.equal(revalidated.body, '')

  for (const [method, url] of [['GET', `/v1/projects/${project.id}`], ['HEAD', `/v1/projects/${project.id}`], ['GET', '/v1/projects'], ['HEAD', '/v1/projects']] as const) {
    const refused = await app.inject({ method, url, headers: { accept, 'accept-encoding': 'gzip' } })
    t.equal(refused.statusCode, 406, `${method} ${url}`)
    t.match(refused.headers['content-type'], /^application\/problem\+json/)
    for (const name of ['etag', 'last-modified', 'link', 'x-total-count', 'content-encoding']) t.notOk(refused.headers[name], `${method} ${url}: the 406 has no ${name}`)
    t.equal(refused.headers['cache-control'], 'no-store')
    t.ok(refused.headers['x-request-id'], 'the request id stays')
    t.ok(refused.headers['x-ratelimit-limit'] && refused.headers.ratelimit, 'the rate-limit headers stay')
    t.equal(refused.headers['x-content-type-options'], 'nosniff', 'the security headers stay')
    if (method === 'GET') t.match(body(refused), { status: 406, detail: /application\/json, which the Accept header does not allow/ })
  }
})

t.test('CORS only for CORS_ORIGINS, exposing the headers clients read', async t => {
  const app = await buildTestApp(t, { env: { CORS_ORIGINS: 'https://app.example.com' } })
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/v1/projects/1',
    headers: { authorization: undefined, origin: 'https://app.example.com', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, if-match, content-type' }
  })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.com')
  t.match(preflight.headers['access-control-allow-methods'], /PATCH/)
  t.match(preflight.headers['access-control-allow-headers'], /Authorization/)
  t.match(preflight.headers['access-control-allow-headers'], /If-Match/)
  t.match(preflight.headers['access-control-allow-headers'], /If-Unmodified-Since/)
  t.equal(preflight.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS')

  const read = await app.inject({ method: 'GET', url: '/v1/projects', headers: { origin: 'https://app.example.com' } })
  t.equal(read.headers['access-control-allow-origin'], 'https://app.example.com')
  const exposed = String(read.headers['access-control-expose-headers'])
  for (const name of ['Link', 'X-Total-Count', 'ETag', 'Location', 'X-Request-Id', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit']) {
    t.ok(exposed.split(',').map(value => value.trim()).includes(name), `exposes ${name}`)
  }
  const accessControl = (headers: Record<string, unknown>): string[] => Object.keys(headers).filter(name => name.startsWith('access-control-'))
  const foreign = await app.inject({ method: 'GET', url: '/v1/projects', headers: { origin: 'https://evil.example.com' } })
  t.equal(foreign.statusCode, 200)
  t.same(accessControl(foreign.headers), [], 'other origins get no CORS header at all')
  t.match(foreign.headers.vary, /Origin/, 'and caches keep the answers to each origin apart')
  const foreignPreflight = await app.inject({
    method: 'OPTIONS',
    url: '/v1/projects/1',
    headers: { authorization: undefined, origin: 'https://evil.example.com', 'access-control-request-method': 'PATCH' }
  })
  t.same(accessControl(foreignPreflight.headers), [], 'nor a preflight from one')
  const sameOrigin = await app.inject({ method: 'GET', url: '/v1/projects' })
  t.same(accessControl(sameOrigin.headers), [], 'nor a request that names no origin')

  const closed = await buildTestApp(t)
  const none = await closed.inject({ method: 'GET', url: '/v1/projects', headers: { origin: 'https://app.example.com' } })
  t.notOk(none.headers['access-control-allow-origin'], 'no CORS unless configured')
})

t.test('large lists are compressed for clients that accept it; records keep exact strong ETags', async t => {
  const app = await buildTestApp(t)
  for (let i = 0; i < 30; i++) await createProject(app, { description: `a longish description number ${i} `.repeat(3) })
  const plain = await app.inject({ method: 'GET', url: '/v1/projects' })
  const zipped = await app.inject({ method: 'GET', url: '/v1/projects', headers: { 'accept-encoding': 'gzip' } })
  t.equal(zipped.headers['content-encoding'], 'gzip')
  t.match(zipped.headers.vary, /accept-encoding/i)
  t.same(JSON.parse(gunzipSync(zipped.rawPayload).toString()), body(plain))
  t.equal(zipped.headers.etag, plain.headers.etag, 'a weak list tag is the same for equivalent encodings')
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { 'accept-encoding': 'gzip', 'if-none-match': plain.headers.etag as string } })).statusCode, 304)

  const one = await app.inject({ method: 'GET', url: '/v1/projects/1', headers: { 'accept-encoding': 'gzip' } })
  t.notOk(one.headers['content-encoding'], 'single records are not re-encoded, so their strong ETag names exact bytes')
  t.match(one.headers.etag, /^"/)
})

t.test('a record past the size threshold is still sent uncompressed, written or read', async t => {
  const app = await buildTestApp(t)
  const gzip = { 'accept-encoding': 'gzip', 'content-type': 'application/json' }
  const description = 'long enough to be worth compressing '.repeat(60)
  const created = await app.inject({ method: 'POST', url: '/v1/projects', headers: gzip, payload: JSON.stringify({ name: 'big', description }) })
  const read = await app.inject({ method: 'GET', url: '/v1/projects/1', headers: gzip })
  const replaced = await app.inject({ method: 'PUT', url: '/v1/projects/1', headers: gzip, payload: JSON.stringify({ name: 'big', description: `${description}!` }) })
  const patched = await app.inject({ method: 'PATCH', url: '/v1/projects/1', headers: gzip, payload: JSON.stringify({ budget: 3 }) })
  for (const [what, response, status] of [['POST', created, 201], ['GET', read, 200], ['PUT', replaced, 200], ['PATCH', patched, 200]] as const) {
    t.equal(response.statusCode, status, what)
    t.ok(response.rawPayload.length > 1024, `${what}: the body is past the threshold`)
    t.notOk(response.headers['content-encoding'], `${what}: sent as it is, the bytes its strong ETag names`)
    t.equal(JSON.parse(response.body).id, 1)
  }
})

t.test('a list is coded as the client prefers, the same bytes each time it is asked for again, and never below the size threshold', async t => {
  const app = await buildTestApp(t)
  for (let i = 0; i < 30; i++) await createProject(app, { description: `a longish description number ${i} `.repeat(3) })
  const plain = await app.inject({ method: 'GET', url: '/v1/projects' })
  t.notOk(plain.headers['content-encoding'], 'no Accept-Encoding: sent as it is')
  t.match(plain.headers.vary, /accept-encoding/i, 'but the answer says it depends on it')
  const decoders: Record<string, (data: Buffer) => Buffer> = { br: brotliDecompressSync, gzip: gunzipSync, deflate: inflateSync }
  const cases: Array<[string, string | undefined]> = [
    ['gzip, deflate, br', 'br'], ['gzip', 'gzip'], ['deflate', 'deflate'], ['br;q=0.5, gzip', 'gzip'], ['gzip, br', 'br'],
    ['*', 'br'], ['identity', undefined], ['gzip;q=0', undefined], ['compress', undefined], ['x-gzip', 'gzip'], ['X-GZIP, deflate', 'gzip']
  ]
  for (let round = 1; round <= 2; round++) {
    for (const [accepted, expected] of cases) {
      const coded = await app.inject({ method: 'GET', url: '/v1/projects', headers: { 'accept-encoding': accepted } })
      t.equal(coded.statusCode, 200)
      t.equal(coded.headers['content-encoding'], expected, `round ${round}, Accept-Encoding: ${accepted}`)
      const decoded = expected === undefined ? coded.rawPayload : decoders[expected]!(coded.rawPayload)
      t.same(JSON.parse(decoded.toString()), body(plain), `round ${round}, ${accepted}: the same records`)
      t.equal(Number(coded.headers['content-length']), coded.rawPayload.length, `round ${round}, ${accepted}: Content-Length is the coded length`)
      t.equal(coded.headers.etag, plain.headers.etag)
      t.match(coded.headers.vary, /accept-encoding/i)
      t.match(coded.headers.vary, /authorization/i)
    }
  }
  const head = await app.inject({ method: 'HEAD', url: '/v1/projects', headers: { 'accept-encoding': 'gzip' } })
  t.equal(head.headers['content-encoding'], 'gzip', 'HEAD says what GET would send')
  t.equal(head.body, '')
  const optedOut = await app.inject({ method: 'GET', url: '/v1/projects', headers: { 'accept-encoding': 'gzip', 'x-no-compression': '1' } })
  t.notOk(optedOut.headers['content-encoding'], 'x-no-compression is honoured, as @fastify/compress does')
  const small = await app.inject({ method: 'GET', url: '/v1/projects?limit=1&fields=name', headers: { 'accept-encoding': 'gzip' } })
  t.ok(small.rawPayload.length < 1024)
  t.notOk(small.headers['content-encoding'], 'a body under 1 KiB is not coded')
  t.notMatch(small.headers.vary, /accept-encoding/i, 'and does not depend on Accept-Encoding')

  // CORS adds Origin before the handler runs; coding the list must keep it.
  const cors = await buildTestApp(t, { env: { CORS_ORIGINS: 'https://app.example.com' } })
  for (let i = 0; i < 30; i++) await createProject(cors, { description: `a longish description number ${i} `.repeat(3) })
  const fromBrowser = await cors.inject({ method: 'GET', url: '/v1/projects', headers: { origin: 'https://app.example.com', 'accept-encoding': 'gzip' } })
  t.equal(fromBrowser.headers['content-encoding'], 'gzip')
  t.same(String(fromBrowser.headers.vary).split(',').map(name => name.trim().toLowerCase()).sort(), ['accept-encoding', 'api-version', 'authorization', 'origin'], 'Vary keeps every name')
})

t.test('a deprecated resource says so in headers and in OpenAPI', async t => {
  const legacy = defineResource({
    collection: 'legacies',
    singular: 'legacy',
    fields: Type.Object({ name: Type.String(), old: Type.Optional(Type.String({ deprecated: true })) }),
    deprecated: { since: '2026-01-01T00:00:00Z', sunset: '2027-01-01T00:00:00Z', link: 'https://example.com/migrate' }
  })
  const app = await buildTestApp(t, { definitions: [legacy] })
  const created = await post(app, '/v1/legacies', { name: 'x' })
  for (const response of [created, await app.inject({ method: 'GET', url: '/v1/legacies' })]) {
    t.equal(response.headers.deprecation, `@${Date.parse('2026-01-01T00:00:00Z') / 1000}`)
    t.equal(response.headers.sunset, 'Fri, 01 Jan 2027 00:00:00 GMT')
    t.equal(response.headers.link?.toString().includes('<https://example.com/migrate>; rel="deprecation"'), true)
  }
  const list = await app.inject({ method: 'GET', url: '/v1/legacies?limit=1' })
  t.equal(list.headers.link, '</v1/legacies?limit=1&page=1>; rel="first", </v1/legacies?limit=1&page=1>; rel="last", <https://example.com/migrate>; rel="deprecation"', "a list's page links stay beside the deprecation link")
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  t.equal(document.paths['/v1/legacies'].get.deprecated, true)
  for (const [path, method, status] of [['/v1/legacies', 'get', '200'], ['/v1/legacies', 'post', '201'], ['/v1/legacies/{id}', 'delete', '404'], ['/v1/legacies/{id}', 'get', '406']] as const) {
    const headers = document.paths[path][method].responses[status].headers
    t.match(headers.Deprecation.description, /^`@1767225600`/, `${method} ${path} documents Deprecation`)
    t.match(headers.Sunset.description, /^`Fri, 01 Jan 2027 00:00:00 GMT`/)
  }
  t.equal(document.components.schemas.Legacy.deprecated, true)
  t.equal(document.components.schemas.Legacy.properties.old.deprecated, true, 'a deprecated field is marked too')
})
