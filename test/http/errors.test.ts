import { connect } from 'node:net'
import t from 'tap'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import { openStore } from '../../src/store/open.js'
import type { Store } from '../../src/store/store.js'
import { ADMIN, assertProblem, body, buildTestApp, createProject, listen, logCollector, testStoreOptions, type Json } from '../helper.js'

t.test('unknown paths are 404 problems', async t => {
  const app = await buildTestApp(t)
  for (const url of ['/nope', '/v1/nope', '/v1/projects/1/nope', '/']) {
    const problem = assertProblem(t, await app.inject({ method: 'GET', url }), 404, 'not-found')
    t.equal(problem.instance, url)
    t.notMatch(problem.detail, /Api-Version/, `${url}: no version would route it, so no hint`)
  }
})

t.test('an unprefixed resource path sent without Api-Version is 404 saying how to give the version', async t => {
  const app = await buildTestApp(t)
  for (const [url, versioned] of [['/projects', '/v1/projects'], ['/projects/1/tasks?limit=5', '/v1/projects/1/tasks'], ['/tasks/', '/v1/tasks/']] as const) {
    const problem = assertProblem(t, await app.inject({ method: 'GET', url, headers: { authorization: ADMIN } }), 404, 'not-found')
    t.equal(problem.detail, `nothing is at GET ${url.split('?')[0]}; paths begin with the API version (${versioned}), or send Api-Version: 1`)
  }
  const served = await app.inject({ method: 'GET', url: '/projects', headers: { authorization: ADMIN, 'api-version': '1' } })
  t.equal(served.statusCode, 200, 'the header form the hint names serves it')
})

t.test('paths the router cannot read are problems too: bad percent-encoding 400, an overlong segment 414; a long id still reaches validation', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info', CORS_ORIGINS: 'https://app.example.com' } })
  for (const [method, url] of [['GET', '/v1/projects/%zz'], ['GET', '/v1/projects/%E0%A4%A'], ['GET', '/v1/pro%zzjects'], ['GET', '/v1/projects/1/tasks%?limit=5'], ['POST', '/v1/projects/%zz'], ['PROPFIND', '/v1/%zz'], ['GET', '/health/%zz']] as const) {
    const requestId = `bad-path-${logs.lines.length}`
    // light-my-request's type names only the common methods; it sends any.
    const response = await app.inject({ method: method as 'GET', url, headers: { authorization: ADMIN, origin: 'https://app.example.com', 'x-request-id': requestId } })
    const problem = assertProblem(t, response, 400, 'validation')
    t.same(problem.errors, [{ in: 'path', pointer: '', detail: 'is not valid percent-encoding (RFC 3986 §2.1)' }], url)
    t.equal(problem.instance, url.split('?')[0])
    t.equal(response.headers['cache-control'], 'no-store')
    t.equal(response.headers['x-content-type-options'], 'nosniff', 'security headers as on every answer')
    t.match(response.headers['content-security-policy'], /default-src 'none'/)
    t.ok(response.headers['x-ratelimit-remaining'] !== undefined && response.headers.ratelimit !== undefined, `${method} ${url}: counted, with the rate-limit headers of every answer`)
    t.equal(response.headers['access-control-allow-origin'], 'https://app.example.com', 'a browser client may read why')
    t.match(response.headers.vary, /Authorization/)
    t.match(logs.lines.filter(line => line.requestId === requestId), [{ msg: 'request completed', method, url, statusCode: 400, detail: /percent-encoding/ }], 'one log line, with the URL as sent')
  }
  const remaining = async (): Promise<number> => Number((await app.inject({ method: 'GET', url: '/v1/%zz', headers: { authorization: undefined } })).headers['x-ratelimit-remaining'])
  const before = await remaining()
  t.equal(await remaining(), before - 1, 'each one counts against the client\'s limit')
  const byName = await app.inject({ method: 'GET', url: '/v1/.refused-before-routing', headers: { authorization: ADMIN } })
  assertProblem(t, byName, 404, 'not-found')
  const long = assertProblem(t, await app.inject({ method: 'GET', url: `/v1/projects/${'9'.repeat(500)}`, headers: { authorization: ADMIN } }), 400, 'validation')
  t.same(long.errors, [{ in: 'path', pointer: '/id', detail: 'must be <= 9007199254740991' }], 'an id of any sane length is 400 naming it and its bound')
  const overlong = await app.inject({ method: 'GET', url: `/v1/projects/${'9'.repeat(1001)}`, headers: { authorization: ADMIN } })
  t.match(assertProblem(t, overlong, 414, 'uri-too-long').detail, /longer than 1000 characters/)
  t.equal(overlong.headers['x-content-type-options'], 'nosniff')
  t.ok(overlong.headers['x-ratelimit-limit'], 'with the rate-limit headers')
  const overlongChild = await app.inject({ method: 'GET', url: `/v1/projects/${'9'.repeat(1001)}/tasks`, headers: { authorization: ADMIN } })
  assertProblem(t, overlongChild, 414, 'uri-too-long')
})

t.test('versions: /v9 and Api-Version: 9 are 404 naming the versions; Api-Version: 1 serves v1', async t => {
  const app = await buildTestApp(t)
  const byPath = assertProblem(t, await app.inject({ method: 'GET', url: '/v9/projects' }), 404, 'unknown-version')
  t.match(byPath.detail, /available: 1/)
  const byHeader = assertProblem(t, await app.inject({ method: 'GET', url: '/projects', headers: { 'api-version': '9' } }), 404, 'unknown-version')
  t.match(byHeader.detail, /available: 1/)
  t.equal(byHeader.instance, '/projects', 'the instance is the path the client sent, not the rewritten one')
  t.equal(byHeader.detail, 'Api-Version "9" does not exist; available: 1')
  const traversal = assertProblem(t, await app.inject({ method: 'GET', url: '/projects', headers: { 'api-version': '../v1' } }), 404, 'unknown-version')
  t.equal(traversal.detail, 'Api-Version "../v1" does not exist; available: 1', 'the detail names the value sent, not the placeholder it was routed to')
  const prefixed = assertProblem(t, await app.inject({ method: 'GET', url: '/projects', headers: { 'api-version': 'v1' } }), 404, 'unknown-version')
  t.equal(prefixed.detail, 'Api-Version "v1" does not exist; available: 1')
  const long = assertProblem(t, await app.inject({ method: 'GET', url: '/projects', headers: { 'api-version': 'x'.repeat(500) } }), 404, 'unknown-version')
  t.equal(long.detail, `Api-Version "${'x'.repeat(40)}…" does not exist; available: 1`, 'a long value is cut short')
  t.equal(byPath.detail, 'API version 9 does not exist; available: 1')

  const project = await createProject(app)
  const viaHeader = await app.inject({ method: 'GET', url: `/projects/${project.id}`, headers: { 'api-version': '1' } })
  t.equal(viaHeader.statusCode, 200)
  t.equal(body(viaHeader).links.self, `/v1/projects/${project.id}`, 'links stay canonical')
  const linkWithHeader = await app.inject({ method: 'GET', url: body(viaHeader).links.self, headers: { 'api-version': '9' } })
  t.equal(linkWithHeader.statusCode, 200, "on a /v1 path the path's version wins, so a client sending the header can follow links")
  const missing = assertProblem(t, await app.inject({ method: 'GET', url: '/projects/999999/tasks?fields=name', headers: { 'api-version': '1' } }), 404)
  t.equal(missing.instance, '/projects/999999/tasks')
  const created = await app.inject({ method: 'POST', url: '/projects', headers: { 'api-version': '1', 'content-type': 'application/json' }, payload: { name: 'Header' } })
  t.equal(created.statusCode, 201)
  t.match(created.headers.location, /^\/v1\/projects\/\d+$/)
  t.equal((await app.inject({ method: 'GET', url: '/health', headers: { 'api-version': '1' } })).statusCode, 200, 'unversioned paths ignore it')
})

t.test('a known path with a method it lacks is 405 with Allow; OPTIONS lists them', async t => {
  const app = await buildTestApp(t)
  const collection = await app.inject({ method: 'DELETE', url: '/v1/projects' })
  assertProblem(t, collection, 405, 'method-not-allowed')
  t.equal(collection.headers.allow, 'GET, HEAD, POST, OPTIONS')
  const item = await app.inject({ method: 'POST', url: '/v1/projects/1' })
  assertProblem(t, item, 405)
  t.equal(item.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS')
  const related = await app.inject({ method: 'PUT', url: '/v1/projects/1/tasks' })
  t.equal(related.headers.allow, 'GET, HEAD, POST, OPTIONS')
  const health = await app.inject({ method: 'POST', url: '/health' })
  assertProblem(t, health, 405)
  t.equal(health.headers.allow, 'GET, HEAD, OPTIONS')
  const options = await app.inject({ method: 'OPTIONS', url: '/v1/projects/1' })
  t.equal(options.statusCode, 204)
  t.equal(options.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS')
  // Any method Node accepts, not only the common ones: a probe with TRACE or a WebDAV client's PROPFIND.
  for (const [method, url, allow] of [['TRACE', '/v1/projects', 'GET, HEAD, POST, OPTIONS'], ['PROPFIND', '/v1/projects/1', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'], ['M-SEARCH', '/health', 'GET, HEAD, OPTIONS']] as const) {
    // light-my-request's type names only the common methods; it sends any.
    const other = await app.inject({ method: method as 'GET', url })
    t.match(assertProblem(t, other, 405, 'method-not-allowed').detail, new RegExp(`^${method} is not allowed here`))
    t.equal(other.headers.allow, allow, `${method} ${url}`)
  }
  assertProblem(t, await app.inject({ method: 'PROPFIND' as 'GET', url: '/v1/nothing-here' }), 404, 'not-found')
})

/**
 * Sends `request` as written on a connection of its own, then everything the
 * server answers until it closes (ask it to: `Connection: close`). The client
 * does not end its side first: Node's server takes that as the client
 * leaving, and drops a request whose handler is still at work.
 */
async function exchange (port: number, request: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let data = ''
    socket.on('data', chunk => { data += chunk.toString() })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
  })
}

/** The problem an answer read off the socket carries. */
const rawProblem = (answer: string): Json => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Json

t.test('OPTIONS * asks about the server as a whole: 204 with every method it serves (RFC 9110 §9.3.7); CONNECT is a 405 problem', async t => {
  const app = await buildTestApp(t)
  const port = Number(new URL(await listen(app)).port)
  // light-my-request turns a target of `*` into `/*`, so this one goes over a socket.
  const server = await exchange(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.match(server, /^HTTP\/1\.1 204 /)
  t.match(server, /\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n/)
  t.match(server, /\r\nx-ratelimit-remaining: \d+\r\n/, 'counted like any other request')
  t.match(server, /\r\nx-content-type-options: nosniff\r\n/)
  t.notMatch(server, /content-length: [1-9]/, 'no body')
  // Api-Version names a version of the paths; `*` has none, and stays the server's.
  t.match(await exchange(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nApi-Version: 1\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 204 /, 'with Api-Version too')
  // CONNECT asks for a tunnel, which Node would have closed unanswered: refused like a method any path lacks, and the connection closes.
  const tunnel = await exchange(port, 'CONNECT db.internal:5432 HTTP/1.1\r\nHost: db.internal:5432\r\n\r\n')
  t.match(tunnel, /^HTTP\/1\.1 405 /)
  t.match(tunnel, /\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n/)
  t.match(tunnel, /\r\nconnection: close\r\n/i)
  t.match(tunnel, /\r\nx-ratelimit-remaining: \d+\r\n/, 'counted like any other request')
  t.match(rawProblem(tunnel), { status: 405, type: /method-not-allowed$/, detail: 'CONNECT is not allowed: this service is no proxy' })
  // Only OPTIONS takes `*`: any other method with it names nothing.
  const other = await exchange(port, 'GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.match(other, /^HTTP\/1\.1 404 /)
  t.match(rawProblem(other), { status: 404, detail: 'nothing is at GET *' })
})

t.test('an absolute-form target (RFC 9112 §3.2.2) is routed, versioned and refused as its path would be', async t => {
  const app = await buildTestApp(t)
  const port = Number(new URL(await listen(app)).port)
  await createProject(app)
  const get = async (target: string, headers = ''): Promise<string> => await exchange(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\n${headers}Connection: close\r\n\r\n`)
  const listed = await get('http://api.example/projects?limit=1', 'Api-Version: 1\r\n')
  t.match(listed, /^HTTP\/1\.1 200 /, 'Api-Version on an absolute-form target')
  t.match(listed, /\r\nlink: <\/v1\/projects\?limit=1&page=1>; rel="first"/, 'links in the canonical form')
  t.match(rawProblem(await get('http://api.example/v9/projects')), { status: 404, type: /unknown-version$/, detail: 'API version 9 does not exist; available: 1', instance: 'http://api.example/v9/projects' })
  t.match(rawProblem(await get('https://api.example:8443/v1/projects/999999')), { status: 404, detail: 'no project with id 999999' })
  t.match(await get('http://api.example/health'), /^HTTP\/1\.1 200 /)
  t.match(rawProblem(await get('http://api.example')), { status: 404, detail: 'nothing is at GET /' }, 'an empty path is /')
})

t.test('a Host missing from an HTTP/1.1 request, given twice or malformed is a 400 problem (RFC 9112 §3.2), not Node\'s empty 400', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  const port = Number(new URL(await listen(app)).port)
  // light-my-request always sends one Host, so these go over a socket.
  const refused = [
    { host: '', detail: 'is required in an HTTP/1.1 request (RFC 9112 §3.2)' },
    { host: 'Host: a.example\r\nhost: b.example\r\n', detail: 'is given 2 times; give it once (RFC 9112 §3.2)' },
    { host: 'Host: a.example\r\nHOST: a.example\r\n', detail: 'is given 2 times; give it once (RFC 9112 §3.2)' },
    { host: 'Host: a.example b\r\n', detail: 'must be a host name or address, with an optional port (RFC 9110 §7.2)' },
    { host: 'Host: user@a.example\r\n', detail: 'must be a host name or address, with an optional port (RFC 9110 §7.2)' },
    { host: 'Host: a.example/v1\r\n', detail: 'must be a host name or address, with an optional port (RFC 9110 §7.2)' }
  ]
  for (const { host, detail } of refused) {
    const answer = await exchange(port, `GET /v1/projects HTTP/1.1\r\n${host}X-Request-Id: host-check\r\nConnection: close\r\n\r\n`)
    t.match(answer, /^HTTP\/1\.1 400 /, JSON.stringify(host))
    t.match(answer, /\r\ncontent-type: application\/problem\+json/)
    t.match(answer, /\r\nx-content-type-options: nosniff\r\n/, 'with the security headers')
    t.match(answer, /\r\nx-ratelimit-remaining: \d+\r\n/, 'counted like any other request')
    t.match(rawProblem(answer), { status: 400, type: /validation$/, detail: `/host ${detail}`, instance: '/v1/projects', requestId: 'host-check', errors: [{ in: 'header', pointer: '/host', detail }] })
  }
  t.equal(logs.lines.filter(line => line.requestId === 'host-check' && line.statusCode === 400).length, refused.length, 'each logged')
  // What RFC 9110 §7.2 allows: a name or an address, an IP literal, a port, even an empty value; and HTTP/1.0 needs none.
  for (const host of ['Host: a.example\r\n', 'Host: 127.0.0.1:8080\r\n', 'Host: [::1]:8080\r\n', 'Host: xn--mnchen-3ya.example:\r\n', 'Host:\r\n']) {
    t.match(await exchange(port, `GET /health HTTP/1.1\r\n${host}Connection: close\r\n\r\n`), /^HTTP\/1\.1 200 /, JSON.stringify(host))
  }
  t.match(await exchange(port, 'GET /health HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /, 'HTTP/1.0 without Host')
})

t.test('a path or method that does not exist is told before the body is read: its 404 or 405 comes before 415, 400 or QUERY\'s missing Content-Type', async t => {
  const app = await buildTestApp(t)
  const sent = [
    { what: 'a body no route here takes', headers: { 'content-type': 'text/plain' }, payload: 'x' },
    { what: 'malformed JSON', headers: { 'content-type': 'application/json' }, payload: '{bad' },
    { what: 'a JSON body', headers: { 'content-type': 'application/json' }, payload: '{"name":"x"}' },
    { what: 'no body', headers: {}, payload: undefined }
  ]
  for (const { what, headers, payload } of sent) {
    for (const [method, url, allow] of [['POST', '/v1/projects/1', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'], ['PUT', '/v1/projects', 'GET, HEAD, POST, OPTIONS'], ['POST', '/health', 'GET, HEAD, OPTIONS'], ['QUERY', '/v1/projects/1/tasks', 'GET, HEAD, POST, OPTIONS']] as const) {
      // Without credentials too: which methods a path has is no secret (Allow says so), and no credential changes it.
      const refused = await app.inject({ method: method as 'POST', url, headers, ...(payload === undefined ? {} : { payload }) })
      t.match(assertProblem(t, refused, 405, 'method-not-allowed').detail, new RegExp(`^${method} is not allowed here`), `${method} ${url}, ${what}`)
      t.equal(refused.headers.allow, allow, `${method} ${url}, ${what}: Allow`)
    }
    for (const [method, url] of [['POST', '/nope'], ['PATCH', '/v1/nothing-here'], ['QUERY', '/v1/nothing-here']] as const) {
      const missing = await app.inject({ method: method as 'POST', url, headers: { authorization: ADMIN, ...headers }, ...(payload === undefined ? {} : { payload }) })
      t.equal(assertProblem(t, missing, 404, 'not-found').detail, `nothing is at ${method} ${url}`, `${method} ${url}, ${what}`)
      t.ok(missing.headers['x-ratelimit-remaining'], `${method} ${url}, ${what}: counted as every /v1 request is`)
    }
  }
  const unknownVersion = await app.inject({ method: 'POST', url: '/v9/projects', headers: { 'content-type': 'application/json' }, payload: '{bad' })
  assertProblem(t, unknownVersion, 404, 'unknown-version')
})

t.test('bodies that are not JSON, or not UTF-8 by their label, are 415 saying what is accepted', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  const text = await app.inject({ method: 'POST', url: '/v1/projects', payload: '{"name":"x"}', headers: { 'content-type': 'text/plain' } })
  assertProblem(t, text, 415, 'unsupported-media-type')
  t.equal(text.headers['accept-post'], 'application/json')
  t.match(body(text).detail, /text\/plain/)

  const form = await app.inject({ method: 'PATCH', url: `/v1/projects/${project.id}`, payload: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  assertProblem(t, form, 415)
  t.equal(form.headers['accept-patch'], 'application/merge-patch+json, application/json')

  const mergeOnPost = await app.inject({ method: 'POST', url: '/v1/projects', payload: '{"name":"x"}', headers: { 'content-type': 'application/merge-patch+json' } })
  assertProblem(t, mergeOnPost, 415)
  t.equal(mergeOnPost.headers['accept-post'], 'application/json')

  const charset = await app.inject({ method: 'POST', url: '/v1/projects', payload: '{"name":"charset"}', headers: { 'content-type': 'application/json; charset=utf-8' } })
  t.equal(charset.statusCode, 201, 'parameters on the media type are fine')
  for (const utf8 of ['UTF-8', '"utf-8"', 'utf8', 'US-ASCII']) {
    const labelled = await app.inject({ method: 'POST', url: '/v1/projects', payload: JSON.stringify({ name: `charset ${utf8}` }), headers: { 'content-type': `application/json;charset=${utf8}` } })
    t.equal(labelled.statusCode, 201, `charset=${utf8}`)
  }
  // "Ã©" in Latin-1 is the two bytes UTF-8 reads as "é": read anyway, the name would change without a word.
  const latin1 = await app.inject({ method: 'POST', url: '/v1/projects', payload: Buffer.from('{"name":"cafÃ©"}', 'latin1'), headers: { 'content-type': 'application/json; charset=ISO-8859-1' } })
  t.match(assertProblem(t, latin1, 415, 'unsupported-media-type').detail, /UTF-8 \(RFC 8259 §8.1\).*charset=iso-8859-1/)
  t.equal(latin1.headers['accept-post'], 'application/json')
  const patched = await app.inject({ method: 'PATCH', url: `/v1/projects/${project.id}`, payload: '{"name":"x"}', headers: { 'content-type': 'application/merge-patch+json; charset=windows-1252' } })
  assertProblem(t, patched, 415)
  t.equal(body(await app.inject({ method: 'GET', url: `/v1/projects/${project.id}` })).name, project.name, 'nothing changed')
})

t.test('a body over the limit is 413', async t => {
  const app = await buildTestApp(t, { env: { BODY_LIMIT: '2048' } })
  const response = await app.inject({ method: 'POST', url: '/v1/projects', payload: JSON.stringify({ name: 'x'.repeat(4000) }), headers: { 'content-type': 'application/json' } })
  const problem = assertProblem(t, response, 413)
  t.match(problem.detail, /2048 bytes/)
})

t.test('malformed, empty, deep, poisoned and non-UTF-8 bodies are 400', async t => {
  const app = await buildTestApp(t)
  const send = async (payload: string | Buffer) =>
    await app.inject({ method: 'POST', url: '/v1/projects', payload, headers: { 'content-type': 'application/json' } })
  assertProblem(t, await send('{"name": '), 400, 'malformed-body')
  assertProblem(t, await send(''), 400)
  assertProblem(t, await send('   '), 400, 'malformed-body')
  const deep = assertProblem(t, await send('{"name":' + '['.repeat(100000) + ']'.repeat(100000) + '}'), 400, 'malformed-body')
  t.match(deep.detail, /deeper/)
  const poisoned = assertProblem(t, await send('{"name":"x","__proto__":{"admin":true}}'), 400, 'validation')
  t.equal(poisoned.detail, 'body must not contain __proto__ or constructor.prototype keys', 'an issue with the whole body names the body')
  t.equal(assertProblem(t, await send('[1]'), 400, 'validation').detail, 'body must be object, not array')
  assertProblem(t, await send('{"name":"x","constructor":{"prototype":{"admin":true}}}'), 400, 'validation')
  assertProblem(t, await send('{"name":"x","tags":[{"__proto__":{"a":1}}]}'), 400)
  assertProblem(t, await send(Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])), 400, 'malformed-body')
  t.same(({}.constructor as unknown as { admin?: boolean }).admin, undefined, 'no prototype was polluted')
})

t.test('a 500 says nothing of internals; the log has them under the request id', async t => {
  const model = buildModel(resources)
  const real = await openStore(model, await testStoreOptions(t))
  const broken: Store = {
    ...real,
    migrate: async () => await real.migrate(),
    close: async () => await real.close(),
    get: async () => { throw new Error('SQLITE_ERROR: no such column: secret_column in SELECT * FROM "projects"') }
  }
  const logs = logCollector()
  const app = await buildTestApp(t, { store: broken, logStream: logs, env: { LOG_LEVEL: 'info' } })
  const response = await app.inject({ method: 'GET', url: '/v1/projects/1', headers: { 'x-request-id': 'trace-500' } })
  const problem = assertProblem(t, response, 500)
  t.equal(problem.requestId, 'trace-500')
  t.notMatch(response.body, /SQLITE|secret_column|SELECT|at .*\.ts/)
  t.match(problem.detail, /trace-500/)
  const logged = logs.lines.find(line => line.requestId === 'trace-500' && line.level === 50)
  t.ok(logged, 'the error is logged at error level with the request id')
  t.match(logged?.err?.message, /secret_column/)
})

t.test('X-Request-Id is echoed when sane, generated otherwise; Authorization is never logged', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  const sane = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'abc-123.def:9' } })
  t.equal(sane.headers['x-request-id'], 'abc-123.def:9')
  const insane = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id\twith <script>' } })
  t.match(insane.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  const missing = await app.inject({ method: 'GET', url: '/health' })
  t.match(missing.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  t.not(missing.headers['x-request-id'], insane.headers['x-request-id'])

  await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: 'Bearer very-secret-token' } })
  t.notMatch(JSON.stringify(logs.lines), /very-secret-token/)
  t.ok(logs.lines.some(line => line.requestId === 'abc-123.def:9'), 'log lines carry the request id')
})

t.test('one log line per request, when it completes: method, URL, status, time, request id, why it was refused', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  await app.inject({ method: 'GET', url: '/v1/projects/999999', headers: { 'x-request-id': 'one-line' } })
  const lines = logs.lines.filter(line => line.requestId === 'one-line')
  t.equal(lines.length, 1, 'no separate "incoming request" line')
  t.match(lines[0], { level: 30, msg: 'request completed', method: 'GET', url: '/v1/projects/999999', statusCode: 404, responseTime: Number, problem: /not-found/, detail: /999999/ })

  // A request line may be 16 KiB and a detail may quote a parameter's name: the line carries the first 2048 characters of each, and says how long it was.
  const longName = 'p'.repeat(3000)
  await app.inject({ method: 'GET', url: `/v1/projects?${longName}=1`, headers: { 'x-request-id': 'long-name' } })
  await app.inject({ method: 'GET', url: `/v1/projects?q=${'x'.repeat(12000)}`, headers: { 'x-request-id': 'long-url' } })
  const [named] = logs.lines.filter(line => line.requestId === 'long-name')
  t.match(named, { statusCode: 400, url: /^\/v1\/projects\?p{2035}… \(3015 characters\)$/, detail: /^\/p{2047}… \(\d+ characters\)$/ })
  const [long] = logs.lines.filter(line => line.requestId === 'long-url')
  t.match(long, { statusCode: 414, url: /… \(12015 characters\)$/, detail: 'the query string is longer than 4096 characters' })
  t.ok(JSON.stringify(long).length < 4096, 'the whole line stays far under 16 KiB')
  // A cut never halves a character written with two UTF-16 units.
  await app.inject({ method: 'GET', url: `/v1/projects?${'p'.repeat(2046)}${encodeURIComponent('😀')}=1`, headers: { 'x-request-id': 'long-emoji' } })
  const [emoji] = logs.lines.filter(line => line.requestId === 'long-emoji')
  t.match(emoji, { detail: /^\/p{2046}… \(\d+ characters\)$/ }, 'the emoji that would be split is left out whole')
})

t.test('a client that leaves while its handler works leaves one line, without the status it was never sent', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  let answered!: (loggedBefore: boolean) => void
  const loggedBeforeAnswer = new Promise<boolean>(resolve => { answered = resolve })
  app.get('/slow', { config: { public: true } }, async () => {
    await new Promise(resolve => setTimeout(resolve, 300))
    answered(logs.lines.some(line => line.requestId === 'left-early'))
    return { late: true }
  })
  const port = Number(new URL(await listen(app)).port)
  const socket = connect(port, '127.0.0.1', () => socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nX-Request-Id: left-early\r\n\r\n'))
  await new Promise(resolve => setTimeout(resolve, 100))
  socket.destroy()
  t.ok(await loggedBeforeAnswer, 'logged when the client left, before the handler answered')
  await new Promise(resolve => setTimeout(resolve, 50))
  const lines = logs.lines.filter(line => line.requestId === 'left-early')
  t.match(lines, [{ level: 30, msg: 'connection closed before the answer', method: 'GET', url: '/slow', responseTime: Number }], 'one line, and none when the late answer goes nowhere')
  t.notOk('statusCode' in lines[0]!)
  // An answered request has only its usual line.
  await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'stayed' } })
  t.match(logs.lines.filter(line => line.requestId === 'stayed'), [{ msg: 'request completed', statusCode: 200 }])
})

t.test('errors of the HTTP parser, and an Expect Node refuses, are problem+json too (raw socket)', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  const port = Number(new URL(await listen(app)).port)
  // Each part is written once the one before has surely been read on its own (an overflow is judged on the read that holds it).
  const rawInParts = async (parts: readonly string[]): Promise<string> => await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    socket.on('data', chunk => { data += chunk.toString() })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
    const writeFrom = (index: number): void => {
      if (index >= parts.length || socket.destroyed) return
      socket.write(parts[index]!)
      setTimeout(() => writeFrom(index + 1), 50)
    }
    writeFrom(0)
  })
  const raw = async (request: string): Promise<string> => await rawInParts([request])
  const huge = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`)
  t.match(huge, /^HTTP\/1\.1 431 /)
  t.match(huge, /content-type: application\/problem\+json/)
  t.match(huge, /\r\nx-content-type-options: nosniff\r\n/, 'with the security headers of every answer')
  t.match(huge, /\r\ncontent-security-policy: default-src 'none'/)
  const problem = JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4)) as { status: number, requestId: string }
  t.equal(problem.status, 431)
  t.match(huge, new RegExp(`x-request-id: ${problem.requestId}`))

  // Node bounds the request line with the header fields and calls either overflow a header one: a target that long is 414.
  const target = `/v1/projects?q=${'a'.repeat(20000)}`
  const longTarget = await raw(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)
  t.match(longTarget, /^HTTP\/1\.1 414 /)
  t.match(JSON.parse(longTarget.slice(longTarget.indexOf('\r\n\r\n') + 4)), { status: 414, type: /uri-too-long$/, detail: /request line is longer than this server reads \(16384 bytes/ })
  t.match(await raw(`GET ${target}`), /^HTTP\/1\.1 414 /, 'and when the line has not ended yet')
  // Node meets the overflow while reading the same bytes as the request before it, before that one is answered:
  // its answer still goes first, then the refusal, as a pipelining client reads them in order.
  // An answer's status line follows the body before it directly, with no line break between.
  const statusLines = (answers: string): string[] => answers.match(/HTTP\/1\.1 \d{3}(?= )/g) ?? []
  t.same(statusLines(await raw(`GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET ${target} HTTP/1.1\r\n\r\n`)), ['HTTP/1.1 200', 'HTTP/1.1 414'], 'and behind a pipelined request, which is answered first')
  // A write answered only after its commit: its 201 is not lost to the refusal behind it, nor is the one pipelined behind it.
  const post = (name: string): string => `POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${11 + name.length}\r\n\r\n{"name":"${name}"}`
  const written = await raw(`${post('Pipelined 1')}${post('Pipelined 2')}GET ${target} HTTP/1.1\r\n\r\n`)
  t.same(statusLines(written), ['HTTP/1.1 201', 'HTTP/1.1 201', 'HTTP/1.1 414'])
  t.match(written, /"name":"Pipelined 1"[^]*"name":"Pipelined 2"/, 'each write\'s own answer, in order')
  t.same(statusLines(await raw('GET /health HTTP/1.1\r\nHost: x\r\n\r\nNOT A REQUEST\r\n\r\n')), ['HTTP/1.1 200', 'HTTP/1.1 400'], 'and before a malformed request')
  const split = await rawInParts([`GET ${target.slice(0, 10000)}`, `${target.slice(10000)} HTTP/1.1\r\nHost: x\r\n\r\n`])
  t.match(split, /^HTTP\/1\.1 414 /, 'and over two reads, when the second ends the line')
  const splitHeader = await rawInParts([`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(10000)}`, `${'a'.repeat(10000)}\r\n\r\n`])
  t.match(splitHeader, /^HTTP\/1\.1 431 /, 'a header over two reads is still 431')

  // A malformed chunk in a body being read is that request's own fault: refused at once, not held back as if it were owed an answer first.
  const chunked = `POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nX-Request-Id: bad-chunk\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\nZZ\r\n`
  t.same(statusLines(await raw(chunked)), ['HTTP/1.1 400'], 'a malformed chunk')
  // A client that goes away while its body is read leaves one info line, not an unexpected error with a stack.
  const leaving = connect(port, '127.0.0.1', () => leaving.write(`POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nX-Request-Id: gone\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"na`))
  await new Promise(resolve => setTimeout(resolve, 100))
  leaving.destroy()
  for (let i = 0; i < 50 && !logs.lines.some(line => line.requestId === 'gone'); i++) await new Promise(resolve => setTimeout(resolve, 20))
  const gone = logs.lines.filter(line => line.requestId === 'gone')
  t.match(gone, [{ level: 30, msg: 'connection closed before the answer', method: 'POST', url: '/v1/projects', responseTime: Number }])
  t.notOk('statusCode' in gone[0]!, 'no status, as none was sent')
  t.same(logs.lines.filter(line => line.level >= 50), [], 'nothing logged as an error')

  const garbage = await raw('NOT A REQUEST\r\n\r\n')
  t.match(garbage, /^HTTP\/1\.1 400 /)
  t.match(garbage, /application\/problem\+json/)

  // Node does not route an Expect other than 100-continue (it answered 417 with no body): it is refused with every hook run.
  const expecting = await raw('GET /v1/projects?limit=5 HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nX-Request-Id: expect-1\r\n\r\n')
  t.match(expecting, /^HTTP\/1\.1 417 /)
  t.match(expecting, /content-type: application\/problem\+json/)
  t.match(expecting, /x-request-id: expect-1/)
  t.match(expecting, /\r\nx-content-type-options: nosniff\r\n/, 'with the security headers')
  t.match(expecting, /\r\nx-ratelimit-remaining: \d+\r\n/, 'and the rate-limit headers')
  t.match(expecting, /\r\nconnection: close\r\n/i, 'and the connection ends with it')
  t.match(JSON.parse(expecting.slice(expecting.indexOf('\r\n\r\n') + 4)), { status: 417, detail: 'Expect can only be 100-continue', instance: '/v1/projects', requestId: 'expect-1' })
  // A client that holds its body back until told to send it is answered without waiting for it.
  const withheld = await raw('POST /v1/projects HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n')
  t.match(withheld, /^HTTP\/1\.1 417 /)
  t.match(logs.lines.filter(line => line.requestId === 'expect-1'), [{ msg: 'request completed', url: '/v1/projects?limit=5', statusCode: 417 }], 'and logged')
})
