import t from 'tap'
import { ADMIN, assertProblem, body, buildTestApp, createProject, logCollector } from '../helper.js'

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
  t.equal(poisoned.detail, "/__proto__ is refused: a key through which an object's prototype could be changed (__proto__, or constructor holding a prototype)")
  t.same(poisoned.errors, [{ in: 'body', pointer: '/__proto__', detail: "is refused: a key through which an object's prototype could be changed (__proto__, or constructor holding a prototype)" }])
  // Every such key is named where it is, as every other offending property is.
  const everyOne = assertProblem(t, await send('{"name":"x","constructor":{"prototype":{"admin":true}},"tags":[{"__proto__":1}],"a/b":{"__proto__":2},"c":{"constructor":1}}'), 400, 'validation')
  t.same((everyOne.errors as Array<{ pointer: string }>).map(error => error.pointer), ['/constructor', '/tags/0/__proto__', '/a~1b/__proto__'])
  t.equal(assertProblem(t, await send('[1]'), 400, 'validation').detail, 'body must be object, not array')
  assertProblem(t, await send('{"name":"x","constructor":{"prototype":{"admin":true}}}'), 400, 'validation')
  assertProblem(t, await send('{"name":"x","tags":[{"__proto__":{"a":1}}]}'), 400)
  assertProblem(t, await send(Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])), 400, 'malformed-body')
  t.same(({}.constructor as unknown as { admin?: boolean }).admin, undefined, 'no prototype was polluted')
})
