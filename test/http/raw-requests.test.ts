/**
 * Requests light-my-request cannot send, over a socket: the targets, Host
 * fields and bytes Node meets before Fastify does. Each still gets a problem
 * with every header and hook of any other answer, in the order it was asked.
 */
import { connect } from 'node:net'
import t from 'tap'
import { ADMIN, buildTestApp, createProject, listen, logCollector } from '../helper.js'
import { exchange, rawProblem, statusLines } from '../support/raw-http.js'

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

t.test('errors of the HTTP parser, and an Expect Node refuses, are problem+json too (raw socket)', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  const port = Number(new URL(await listen(app)).port)
  const huge = await exchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`)
  t.match(huge, /^HTTP\/1\.1 431 /)
  t.match(huge, /content-type: application\/problem\+json/)
  t.match(huge, /\r\nx-content-type-options: nosniff\r\n/, 'with the security headers of every answer')
  t.match(huge, /\r\ncontent-security-policy: default-src 'none'/)
  const problem = rawProblem(huge)
  t.match(problem, { status: 431, detail: 'the header fields are larger than this server reads (16384 bytes with the request line)' })
  t.match(huge, new RegExp(`x-request-id: ${problem.requestId}`))

  // Node bounds the request line with the header fields and calls either overflow a header one: a target that long is 414.
  const target = `/v1/projects?q=${'a'.repeat(20000)}`
  const longTarget = await exchange(port, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)
  t.match(longTarget, /^HTTP\/1\.1 414 /)
  t.match(rawProblem(longTarget), { status: 414, type: /uri-too-long$/, detail: /request line is longer than this server reads \(16384 bytes/ })
  t.match(await exchange(port, `GET ${target}`), /^HTTP\/1\.1 414 /, 'and when the line has not ended yet')
  // Node meets the overflow while reading the same bytes as the request before it, before that one is answered:
  // its answer still goes first, then the refusal, as a pipelining client reads them in order.
  t.same(statusLines(await exchange(port, `GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET ${target} HTTP/1.1\r\n\r\n`)), ['HTTP/1.1 200', 'HTTP/1.1 414'], 'and behind a pipelined request, which is answered first')
  // A write answered only after its commit: its 201 is not lost to the refusal behind it, nor is the one pipelined behind it.
  const post = (name: string): string => `POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${11 + name.length}\r\n\r\n{"name":"${name}"}`
  const written = await exchange(port, `${post('Pipelined 1')}${post('Pipelined 2')}GET ${target} HTTP/1.1\r\n\r\n`)
  t.same(statusLines(written), ['HTTP/1.1 201', 'HTTP/1.1 201', 'HTTP/1.1 414'])
  t.match(written, /"name":"Pipelined 1"[^]*"name":"Pipelined 2"/, 'each write\'s own answer, in order')
  t.same(statusLines(await exchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\nNOT A REQUEST\r\n\r\n')), ['HTTP/1.1 200', 'HTTP/1.1 400'], 'and before a malformed request')
  const split = await exchange(port, `GET ${target.slice(0, 10000)}`, `${target.slice(10000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
  t.match(split, /^HTTP\/1\.1 414 /, 'and over two reads, when the second ends the line')
  const splitHeader = await exchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(10000)}`, `${'a'.repeat(10000)}\r\n\r\n`)
  t.match(splitHeader, /^HTTP\/1\.1 431 /, 'a header over two reads is still 431')

  // A malformed chunk in a body being read is that request's own fault: refused at once, not held back as if it were owed an answer first,
  // and its answer is that request's: its id, its path, one log line.
  const head = (id: string): string => `POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nX-Request-Id: ${id}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
  for (const [id, parts] of [['bad-chunk', [`${head('bad-chunk')}5\r\n{"nam\r\nZZ\r\n`]], ['bad-chunk-later', [head('bad-chunk-later'), '5\r\n{"nam\r\n', 'ZZ\r\n']]] as const) {
    const badChunk = await exchange(port, ...parts)
    t.same(statusLines(badChunk), ['HTTP/1.1 400'], 'a malformed chunk')
    t.match(badChunk, new RegExp(`\r\nx-request-id: ${id}\r\n`), 'answered under the request\'s own id')
    t.match(rawProblem(badChunk), { status: 400, requestId: id, instance: '/v1/projects', detail: 'the request could not be read: Invalid character in chunk size' })
    await new Promise(resolve => setTimeout(resolve, 50))
    t.match(logs.lines.filter(line => line.requestId === id), [{ level: 30, msg: 'request refused while its body was read', method: 'POST', url: '/v1/projects', statusCode: 400, detail: /Invalid character in chunk size/ }], 'its one line says what it was answered')
  }
  // A request answered before its body was read (a 404 needs none) gets no second answer for a body that then goes wrong.
  const answeredFirst = await exchange(port, 'POST /v1/nothing-here HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\n', 'ZZ\r\n')
  t.same(statusLines(answeredFirst), ['HTTP/1.1 404'], 'one answer, and the connection closes')
  // A client that goes away while its body is read leaves one info line, not an unexpected error with a stack.
  const leaving = connect(port, '127.0.0.1', () => leaving.write(`POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nX-Request-Id: gone\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"na`))
  await new Promise(resolve => setTimeout(resolve, 100))
  leaving.destroy()
  for (let i = 0; i < 50 && !logs.lines.some(line => line.requestId === 'gone'); i++) await new Promise(resolve => setTimeout(resolve, 20))
  const gone = logs.lines.filter(line => line.requestId === 'gone')
  t.match(gone, [{ level: 30, msg: 'connection closed before the answer', method: 'POST', url: '/v1/projects', responseTime: Number }])
  t.notOk('statusCode' in gone[0]!, 'no status, as none was sent')
  t.same(logs.lines.filter(line => line.level >= 50), [], 'nothing logged as an error')

  // Node does not route an Expect other than 100-continue (it answered 417 with no body): it is refused with every hook run.
  const expecting = await exchange(port, 'GET /v1/projects?limit=5 HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nX-Request-Id: expect-1\r\n\r\n')
  t.match(expecting, /^HTTP\/1\.1 417 /)
  t.match(expecting, /content-type: application\/problem\+json/)
  t.match(expecting, /x-request-id: expect-1/)
  t.match(expecting, /\r\nx-content-type-options: nosniff\r\n/, 'with the security headers')
  t.match(expecting, /\r\nx-ratelimit-remaining: \d+\r\n/, 'and the rate-limit headers')
  t.match(expecting, /\r\nconnection: close\r\n/i, 'and the connection ends with it')
  t.match(rawProblem(expecting), { status: 417, detail: 'Expect can only be 100-continue', instance: '/v1/projects', requestId: 'expect-1' })
  // A client that holds its body back until told to send it is answered without waiting for it.
  const withheld = await exchange(port, 'POST /v1/projects HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n')
  t.match(withheld, /^HTTP\/1\.1 417 /)
  t.match(logs.lines.filter(line => line.requestId === 'expect-1'), [{ msg: 'request completed', url: '/v1/projects?limit=5', statusCode: 417 }], 'and logged')
})

t.test('bytes the HTTP parser refuses get the status RFC 9110 gives them and a detail naming the fault; each is logged under its request id', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  const port = Number(new URL(await listen(app)).port)
  const unreadable = 'the request could not be read: '
  const cases = [
    // RFC 9110 §9.1: a method the server does not recognise is 501, not a 400 as if the request were malformed.
    { request: 'FOO /v1/projects?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n', status: 501, detail: 'the method FOO is not implemented by this server', instance: '/v1/projects' },
    { request: 'get /health HTTP/1.1\r\nHost: x\r\n\r\n', status: 501, detail: 'the method get is not implemented by this server; method names are case-sensitive', instance: '/health' },
    { request: 'NOT A REQUEST\r\n\r\n', status: 400, detail: `${unreadable}a request line is a method, a target and the version, as in GET /v1/projects HTTP/1.1` },
    // §15.6.6: a major version the server does not speak.
    { request: 'GET /health HTTP/3.0\r\nHost: x\r\n\r\n', status: 505, detail: 'HTTP/3.0 is not supported: send HTTP/1.1', instance: '/health' },
    { request: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', status: 505, detail: 'HTTP/2 is not spoken on this connection: send HTTP/1.1 (HTTP/2 is served only over TLS, where enabled)' },
    // Anything else says what llhttp found.
    { request: 'GET /health HTTP/1.1\nHost: x\n\n', status: 400, detail: `${unreadable}Expected CRLF after version` },
    { request: 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n', status: 400, detail: `${unreadable}Invalid header token` },
    { request: 'POST /v1/projects HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', status: 400, detail: `${unreadable}Duplicate Content-Length` },
    { request: 'POST /v1/projects HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}', status: 400, detail: `${unreadable}Transfer-Encoding can't be present with Content-Length` },
    // A client that took the port for HTTPS: its answer is unreadable to it, the log line tells the operator.
    { request: '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03', status: 400, detail: 'a TLS handshake reached a port that speaks plain HTTP: use http://, not https://' }
  ]
  for (const { request, status, detail, instance = '' } of cases) {
    const answer = await exchange(port, request)
    t.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), JSON.stringify(request))
    t.match(answer, /\r\ncontent-type: application\/problem\+json\r\n/)
    t.match(answer, /\r\nx-content-type-options: nosniff\r\n/, 'with the security headers')
    const problem = rawProblem(answer)
    t.match(problem, { status, detail, type: /^urn:resourcery:problem:[a-z-]+$/ })
    t.equal(problem.instance, instance, 'the target, where the parser read one, without its query')
    t.match(logs.lines.filter(line => line.requestId === problem.requestId), [{ level: 30, msg: 'request refused before it could be read', statusCode: status, problem: problem.type, detail }], 'logged once, as a refusal')
  }
  t.same(logs.lines.filter(line => line.level >= 50), [], 'none logged as an error')
})

t.test('a request line naming HTTP/2.0 or no version (HTTP/0.9) is 505 with every header of an answer, not served as HTTP/1.1', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  const port = Number(new URL(await listen(app)).port)
  for (const [request, version] of [['GET /v1/projects HTTP/2.0\r\nHost: x\r\nX-Request-Id: h2-text\r\nConnection: close\r\n\r\n', '2.0'], ['GET /v1/projects\r\n\r\n', '0.9']] as const) {
    const answer = await exchange(port, request)
    t.match(answer, /^HTTP\/1\.1 505 /, version)
    t.match(answer, /\r\nx-ratelimit-remaining: \d+\r\n/, 'counted like any other request')
    t.match(answer, /\r\nx-content-type-options: nosniff\r\n/)
    t.match(rawProblem(answer), { status: 505, type: 'urn:resourcery:problem:http-version-not-supported', title: 'HTTP Version Not Supported', detail: `HTTP/${version} is not supported: send HTTP/1.1`, instance: '/v1/projects' })
  }
  t.match(logs.lines.filter(line => line.requestId === 'h2-text'), [{ level: 30, msg: 'request completed', statusCode: 505, problem: /http-version-not-supported$/ }])
  // HTTP/1.0 and 1.1 are served as ever.
  t.match(await exchange(port, 'GET /health HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /)
})

t.test('a body that does not arrive within REQUEST_TIMEOUT_MS is 408, answered as its request: its id, its path, its one log line', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info', REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' } })
  const port = Number(new URL(await listen(app)).port)
  const slow = connect(port, '127.0.0.1', () => slow.write(`POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nX-Request-Id: slow-body\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`))
  let answer = ''
  slow.on('data', chunk => { answer += chunk.toString() })
  // A byte now and then: the bound is on the whole request, not on the gaps between its reads.
  const trickle = setInterval(() => { if (!slow.destroyed) slow.write(' ') }, 200)
  await new Promise(resolve => slow.on('close', resolve))
  clearInterval(trickle)
  t.same(statusLines(answer), ['HTTP/1.1 408'])
  t.match(answer, /\r\nx-request-id: slow-body\r\n/)
  t.match(rawProblem(answer), { status: 408, requestId: 'slow-body', instance: '/v1/projects', detail: 'the request did not arrive within the time this server waits for one' })
  await new Promise(resolve => setTimeout(resolve, 50))
  t.match(logs.lines.filter(line => line.requestId === 'slow-body'), [{ level: 30, msg: 'request refused while its body was read', statusCode: 408, problem: /request-timeout$/ }])
  t.same(logs.lines.filter(line => line.msg === 'request refused before it could be read'), [], 'not a second line under another id')
})
