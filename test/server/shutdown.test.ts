// Stopping the built server: a drain that answers what is in flight, closes what is idle or stalled, refuses what comes late, and is bounded by its deadline.
import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { ADMIN } from '../helper.js'
import { startServer } from './spawn.js'

t.test('SIGTERM lets an in-flight request finish, closes its connection after the answer, then exits 0', async t => {
  // A keep-alive timeout past the shutdown deadline: a connection left open after its answer would hold the close until the deadline (exit 1).
  const server = await startServer({ DATABASE_URL: `sqlite:${t.testdir()}/app.db`, KEEP_ALIVE_TIMEOUT_MS: '60000', SHUTDOWN_TIMEOUT_MS: '8000' })
  const payload = JSON.stringify({ name: 'in flight' })
  const url = new URL(`${server.base}/v1/projects`)
  // A keep-alive agent, as browsers and most clients use: the connection outlives the answer unless the server says otherwise.
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => { agent.destroy() })
  const answer = new Promise<{ status: number, body: string, connection: string | undefined }>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { authorization: ADMIN, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, res => {
      let body = ''
      res.on('data', chunk => { body += String(chunk) })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }))
    })
    req.on('error', reject)
    // Half the body now; the rest after the signal, so the request is in flight during shutdown.
    req.write(payload.slice(0, 5))
    setTimeout(() => {
      server.child.kill('SIGTERM')
      setTimeout(() => req.end(payload.slice(5)), 300)
    }, 200)
  })
  const { status, body, connection } = await answer
  t.equal(status, 201, 'the in-flight request completed')
  t.equal(JSON.parse(body).name, 'in flight')
  t.equal(connection, 'close', 'the client is told not to reuse the connection')
  const exit = await server.exited
  t.equal(exit.code, 0, 'stopped as soon as the answer was sent, not at the deadline')
  t.ok(server.logs.some(line => line.msg === 'stopped'))
  t.notOk(server.logs.some(line => String(line.msg).includes('deadline')))
})

t.test('SIGTERM while a large answer is still on its way to a slow reader: the answer arrives whole, then the process exits 0', async t => {
  const server = await startServer({ DATABASE_URL: `sqlite:${t.testdir()}/app.db`, MAX_PAGE_LIMIT: '1000', RATE_LIMIT_MAX: '10000', KEEP_ALIVE_TIMEOUT_MS: '60000', SHUTDOWN_TIMEOUT_MS: '8000' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  // 1000 notes of 20 kB: a 20 MB list, several times what the kernel's socket buffers hold for a reader that pauses.
  const note = JSON.stringify({ name: 'large', body: 'x'.repeat(20000) })
  for (let round = 0; round < 20; round++) {
    await Promise.all(Array.from({ length: 50 }, async () => {
      const created = await fetch(`${server.base}/v1/notes`, { method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: note })
      if (created.status !== 201) throw new Error(`seeding answered ${created.status}`)
    }))
  }
  const url = new URL(server.base)
  const socket = connect(Number(url.port), url.hostname)
  const chunks: Buffer[] = []
  const closed = new Promise(resolve => socket.on('close', resolve))
  socket.write(`GET /v1/notes?limit=1000 HTTP/1.1\r\nHost: test\r\nAuthorization: ${ADMIN}\r\n\r\n`)
  // The answer has begun (its headers said keep-alive, before the signal); the reader then stops reading for a while.
  chunks.push(await new Promise<Buffer>(resolve => socket.once('data', resolve)))
  socket.pause()
  server.child.kill('SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 500))
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.resume()
  await closed
  const [answer, ...more] = responsesIn(Buffer.concat(chunks))
  t.equal(answer?.status, 200)
  t.equal(answer?.headers.connection, 'keep-alive', 'the answer began before the signal')
  t.equal(Buffer.byteLength(answer?.body ?? ''), Number(answer?.headers['content-length']), 'every byte of the body arrived')
  t.equal(/^\[.*\]$/s.test(answer?.body ?? '') ? (JSON.parse(answer!.body) as unknown[]).length : 'a cut body', 1000, 'a list of all the notes')
  t.same(more, [])
  t.equal((await server.exited).code, 0, 'the connection closed after the answer, not at the deadline')
  t.notOk(server.logs.some(line => String(line.msg).includes('deadline')))
})

t.test('SIGTERM closes a connection on which nothing was sent (a browser\'s preconnect) and exits 0 at once', async t => {
  const server = await startServer({ DATABASE_URL: `sqlite:${t.testdir()}/app.db`, SHUTDOWN_TIMEOUT_MS: '8000' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const url = new URL(server.base)
  const silent = connect(Number(url.port), url.hostname)
  await new Promise(resolve => silent.once('connect', resolve))
  const closed = new Promise(resolve => silent.once('close', resolve))
  server.child.kill('SIGTERM')
  await closed
  t.equal((await server.exited).code, 0, 'stopped without waiting for the deadline')
  t.notOk(server.logs.some(line => String(line.msg).includes('deadline')))
})

t.test('SIGTERM closes a connection that sent only part of a request, a moment in; one that finishes its request then gets its 503; the process exits 0', async t => {
  const server = await startServer({ DATABASE_URL: `sqlite:${t.testdir()}/app.db`, SHUTDOWN_TIMEOUT_MS: '8000' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const url = new URL(server.base)
  const [stalled, finishing] = [connect(Number(url.port), url.hostname), connect(Number(url.port), url.hostname)]
  await Promise.all([stalled, finishing].map(async socket => await new Promise(resolve => socket.once('connect', resolve))))
  const answer: Buffer[] = []
  finishing.on('data', (chunk: Buffer) => answer.push(chunk))
  const closed = Promise.all([stalled, finishing].map(async socket => await new Promise(resolve => socket.once('close', resolve))))
  const head = `GET /v1/projects HTTP/1.1\r\nHost: test\r\nAuthorization: ${ADMIN}\r\n`
  stalled.write(head)
  finishing.write(head)
  await new Promise(resolve => setTimeout(resolve, 200))
  const started = Date.now()
  server.child.kill('SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 300))
  finishing.write('\r\n')
  await closed
  t.equal((await server.exited).code, 0, 'stopped without waiting for the deadline')
  t.ok(Date.now() - started < 5000, 'within the moment given, not the 8 s deadline')
  t.notOk(server.logs.some(line => String(line.msg).includes('deadline')))
  t.match(responsesIn(Buffer.concat(answer)), [{ status: 503, headers: { connection: 'close', 'retry-after': /^\d+$/ } }], 'the request finished in time is answered')
})

/** The responses in what a server sent on one connection: status, headers (lower-case names) and body. */
function responsesIn (bytes: Buffer): Array<{ status: number, headers: Record<string, string>, body: string }> {
  const responses = []
  let at = 0
  while (at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at)
    if (end === -1) break
    const [statusLine, ...lines] = bytes.subarray(at, end).toString('latin1').split('\r\n')
    const headers = Object.fromEntries(lines.map(line => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
    const length = Number(headers['content-length'] ?? 0)
    responses.push({ status: Number(statusLine!.split(' ')[1]), headers, body: bytes.subarray(end + 4, end + 4 + length).toString('utf8') })
    at = end + 4 + length
  }
  return responses
}

/** A POST in flight when `signal` comes, and `second` right behind it on the same connection: every answer the connection got. */
async function answersAroundShutdown (t: Test, second: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<ReturnType<typeof responsesIn>> {
  const server = await startServer({ DATABASE_URL: `sqlite:${t.testdir()}/app.db` })
  const url = new URL(server.base)
  const socket = connect(Number(url.port), url.hostname)
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  const closed = new Promise(resolve => socket.on('close', resolve))
  const payload = JSON.stringify({ name: 'in flight' })
  socket.write(`POST /v1/projects HTTP/1.1\r\nHost: test\r\nAuthorization: ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n${payload.slice(0, 5)}`)
  await new Promise(resolve => setTimeout(resolve, 200))
  server.child.kill(signal)
  await new Promise(resolve => setTimeout(resolve, 300))
  // The rest of the request in flight, and the second one right behind it on the same connection: it arrives while the process drains.
  socket.write(`${payload.slice(5)}${second}`)
  await closed
  t.equal((await server.exited).code, 0)
  return responsesIn(Buffer.concat(chunks))
}

t.test('a request that arrives on an open connection after SIGTERM gets a 503 problem with Retry-After, and the connection closes', async t => {
  const [first, second, ...more] = await answersAroundShutdown(t, `GET /v1/projects HTTP/1.1\r\nHost: test\r\nAuthorization: ${ADMIN}\r\n\r\n`)
  t.equal(first?.status, 201, 'the request in flight completed')
  t.equal(second?.status, 503, 'the one that came after the signal is refused')
  t.match(second?.headers['content-type'], /^application\/problem\+json/)
  t.equal(second?.headers['retry-after'], '1')
  t.equal(second?.headers.connection, 'close', 'the client is told to reconnect, which reaches a running process')
  t.equal(second?.headers['cache-control'], 'no-store')
  t.equal(second?.headers['x-content-type-options'], 'nosniff', 'with the security headers of every answer')
  t.match(second?.headers['x-ratelimit-remaining'], /^\d+$/, 'and the rate-limit headers')
  t.match(second?.headers.ratelimit, /^"default";r=\d+;t=\d+$/)
  const problem = JSON.parse(second?.body ?? '{}') as Record<string, unknown>
  t.match(problem, { type: 'urn:resourcery:problem:shutting-down', status: 503, instance: '/v1/projects', requestId: second?.headers['x-request-id'] })
  t.match(problem.detail, /shutting down/)
  t.same(more, [], 'nothing else was answered')
})

t.test('an unknown path that arrives after SIGTERM is the 404 a retry would get, counted, and the connection closes', async t => {
  const [first, second, ...more] = await answersAroundShutdown(t, `GET /v1/nothing HTTP/1.1\r\nHost: test\r\nAuthorization: ${ADMIN}\r\n\r\n`)
  t.equal(first?.status, 201)
  t.equal(second?.status, 404)
  t.match(JSON.parse(second?.body ?? '{}'), { type: 'urn:resourcery:problem:not-found', instance: '/v1/nothing' })
  t.equal(second?.headers.connection, 'close')
  t.match(second?.headers['x-ratelimit-remaining'], /^\d+$/, 'with the rate-limit headers')
  t.same(more, [])
})

t.test('requests pipelined before SIGTERM are all answered, and the connection closes after the last', async t => {
  const server = await startServer({ DATABASE_URL: `sqlite:${t.testdir()}/app.db`, KEEP_ALIVE_TIMEOUT_MS: '60000', SHUTDOWN_TIMEOUT_MS: '8000' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const url = new URL(server.base)
  const socket = connect(Number(url.port), url.hostname)
  const chunks: Buffer[] = []
  const closed = new Promise(resolve => socket.on('close', resolve))
  const firstAnswer = new Promise(resolve => socket.once('data', resolve))
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  // Eight token requests for an unknown client, each running the slow secret hash (four at a time, in Node's
  // thread pool), and a read behind them, all in one write: all are read at once.
  const form = 'grant_type=client_credentials'
  const token = `POST /v1/auth/token HTTP/1.1\r\nHost: test\r\nAuthorization: Basic ${Buffer.from('rsyc_unknown:secret').toString('base64')}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`
  socket.write(`${token.repeat(8)}GET /v1/projects HTTP/1.1\r\nHost: test\r\nAuthorization: ${ADMIN}\r\n\r\n`)
  // The first answer: every request was read before the signal, and the later hashes still run.
  await firstAnswer
  server.child.kill('SIGTERM')
  await closed
  const answers = responsesIn(Buffer.concat(chunks))
  t.same(answers.map(answer => answer.status), [401, 401, 401, 401, 401, 401, 401, 401, 200], 'each request got its answer')
  // The last answer was ready before the signal and said keep-alive: the server closes the connection once it is written.
  t.equal((await server.exited).code, 0, 'the connection closed after the last answer, not at the deadline')
  t.notOk(server.logs.some(line => String(line.msg).includes('deadline')))
})

t.test('on plain HTTP, SIGHUP (a closed terminal) drains like SIGTERM: the request in flight is answered, then the process exits 0', async t => {
  const [first, ...more] = await answersAroundShutdown(t, '', 'SIGHUP')
  t.equal(first?.status, 201, 'the request in flight completed')
  t.equal(first?.headers.connection, 'close')
  t.same(more, [])
})

t.test('a request that never finishes cannot hold shutdown past the deadline', async t => {
  const server = await startServer({ DATABASE_URL: `sqlite:${t.testdir()}/app.db`, SHUTDOWN_TIMEOUT_MS: '500' })
  const url = new URL(server.base)
  const req = request({ host: url.hostname, port: url.port, path: '/v1/projects', method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json', 'content-length': 1000 } })
  req.on('error', () => {})
  req.write('{"name":')
  await new Promise(resolve => setTimeout(resolve, 200))
  const started = Date.now()
  server.child.kill('SIGTERM')
  const exit = await server.exited
  t.equal(exit.code, 1, 'exits non-zero when the deadline cut requests off')
  t.ok(Date.now() - started < 5000, 'within the bound')
  t.ok(server.logs.some(line => String(line.msg).includes('deadline')))
  req.destroy()
})
