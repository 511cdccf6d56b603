/**
 * What a request's log says: one line when it completes (or when its client
 * leaves first), the request id it shares with the answer, the internals a
 * 500 hides from its client, and never a credential.
 */
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect as connectHttp2 } from 'node:http2'
import { connect, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import { openStore } from '../../src/store/open.js'
import type { Store } from '../../src/store/store.js'
import { assertProblem, buildTestApp, listen, logCollector, testStoreOptions } from '../helper.js'
import { exchange } from '../support/raw-http.js'
import { selfSigned } from '../support/self-signed.js'

/** GET /failing-stream: an answer whose stream fails after its first byte, as a file read from a disk that went away. */
function routeToFailingStream (app: FastifyInstance): void {
  app.get('/failing-stream', { config: { public: true } }, async (_request, reply) => {
    let sent = false
    return await reply.type('application/json').send(new Readable({
      read () {
        if (sent) this.destroy(new Error('the disk went away'))
        else this.push('[')
        sent = true
      }
    }))
  })
}

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

t.test('a client that leaves while its answer is being written leaves one line, with the status begun; one that reads it leaves the usual one', async t => {
  const logs = logCollector()
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info' } })
  // More than the kernel holds for a client that reads nothing (its receive buffer and the server's send buffer).
  const big = 'x'.repeat(32 * 1024 * 1024)
  app.get('/big', { config: { public: true } }, async () => ({ big }))
  app.get('/streamed', { config: { public: true } }, async (_request, reply) => {
    const chunk = Buffer.alloc(64 * 1024, 'x')
    let left = 512
    return await reply.type('application/json').send(new Readable({ read () { this.push(left-- > 0 ? chunk : null) } }))
  })
  routeToFailingStream(app)
  const port = Number(new URL(await listen(app)).port)
  for (const [requestId, leave] of [['closed-mid-answer', 'destroy'], ['reset-mid-answer', 'resetAndDestroy']] as const) {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET /big HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${requestId}\r\n\r\n`))
    await new Promise(resolve => socket.once('data', resolve))
    socket.pause()
    await new Promise(resolve => setTimeout(resolve, 200))
    t.same(logs.lines.filter(line => line.requestId === requestId), [], `${leave}: no line while the answer is still being written`)
    socket[leave]()
    await new Promise(resolve => setTimeout(resolve, 200))
    const lines = logs.lines.filter(line => line.requestId === requestId)
    t.match(lines, [{ level: 30, msg: 'connection closed while the answer was sent', method: 'GET', url: '/big', statusCode: 200, responseTime: Number }], leave)
    t.equal(lines.length, 1, `${leave}: one line, and no error line`)
  }
  // The same for an answer sent as a stream (32 MiB, in chunks).
  const streamed = connect(port, '127.0.0.1', () => streamed.write('GET /streamed HTTP/1.1\r\nHost: x\r\nX-Request-Id: streamed-cut\r\n\r\n'))
  await new Promise(resolve => streamed.once('data', resolve))
  streamed.pause()
  await new Promise(resolve => setTimeout(resolve, 200))
  streamed.destroy()
  await new Promise(resolve => setTimeout(resolve, 200))
  const streamedLines = logs.lines.filter(line => line.requestId === 'streamed-cut')
  t.match(streamedLines, [{ level: 30, msg: 'connection closed while the answer was sent', url: '/streamed', statusCode: 200 }], 'a stream cut short')
  t.equal(streamedLines.length, 1, 'a stream cut short: one line')
  // A stream that fails after its headers went: one line, with its error.
  await exchange(port, 'GET /failing-stream HTTP/1.1\r\nHost: x\r\nX-Request-Id: stream-failed\r\n\r\n').catch(() => '')
  await new Promise(resolve => setTimeout(resolve, 200))
  const failedLines = logs.lines.filter(line => line.requestId === 'stream-failed')
  t.match(failedLines, [{ level: 40, msg: 'answer cut short: its stream failed', url: '/failing-stream', statusCode: 200, err: { message: 'the disk went away' } }])
  t.equal(failedLines.length, 1, 'a failed stream: one line')
  // A client that reads its answer over a real connection has its usual line only, once the connection is done with it:
  // kept open, closed by the server after the answer (Connection: close), or an HTTP/1.0 one.
  const read = await fetch(`http://127.0.0.1:${port}/health`, { headers: { 'x-request-id': 'read-it' } })
  t.equal(read.status, 200)
  await read.text()
  t.match(await exchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Request-Id: read-it-closed\r\n\r\n'), /^HTTP\/1\.1 200 /)
  t.match(await exchange(port, 'GET /health HTTP/1.0\r\nX-Request-Id: read-it-1.0\r\n\r\n'), /^HTTP\/1\.1 200 /)
  await new Promise(resolve => setTimeout(resolve, 100))
  for (const requestId of ['read-it', 'read-it-closed', 'read-it-1.0']) {
    const readLines = logs.lines.filter(line => line.requestId === requestId)
    t.match(readLines, [{ msg: 'request completed', statusCode: 200 }], requestId)
    t.equal(readLines.length, 1, `${requestId}: one line`)
  }
})

t.test('over HTTP/2, a stream that fails after its headers went leaves one line, with its error', async t => {
  const logs = logCollector()
  // Not in t.testdir(), which the test app's database empties.
  const certificates = mkdtempSync(join(tmpdir(), 'h2-stream-'))
  t.teardown(() => rmSync(certificates, { recursive: true, force: true }))
  const tls = selfSigned(certificates, 'h2-stream')
  const ca = readFileSync(tls.cert, 'utf8')
  const app = await buildTestApp(t, { logStream: logs, env: { LOG_LEVEL: 'info', HTTP2: '1', TLS_CERT_FILE: tls.cert, TLS_KEY_FILE: tls.key }, tls: { cert: ca, key: readFileSync(tls.key, 'utf8') } })
  routeToFailingStream(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const session = connectHttp2(`https://127.0.0.1:${port}`, { ca })
  t.teardown(() => session.close())
  const stream = session.request({ ':path': '/failing-stream', 'x-request-id': 'h2-stream-failed' })
  stream.on('error', () => {})
  stream.resume()
  await once(stream, 'close')
  await new Promise(resolve => setTimeout(resolve, 200))
  const lines = logs.lines.filter(line => line.requestId === 'h2-stream-failed')
  t.match(lines, [{ level: 40, msg: 'answer cut short: its stream failed', url: '/failing-stream', statusCode: 200, err: { message: 'the disk went away' } }])
  t.equal(lines.length, 1, 'one line, not also one saying the client left')
})
