import { execFileSync, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { connect, constants } from 'node:http2'
import { connect as connectTcp } from 'node:net'
import { connect as connectTls } from 'node:tls'
import t, { type Test } from 'tap'
import { ADMIN } from '../helper.js'
import { selfSigned } from '../support/self-signed.js'
import { SERVER_ENTRY, startServer, type RunningServer } from '../server/spawn.js'

interface Answer { status: number, headers: Record<string, unknown>, fingerprint: string }

/** The built server over HTTPS with a fresh certificate (killed at the test's end), and that certificate to trust. */
async function startHttps (t: Test, name: string, env: Record<string, string> = {}): Promise<{ server: RunningServer, url: URL, ca: string }> {
  const dir = t.testdir()
  const pair = selfSigned(dir, name)
  const server = await startServer({ DATABASE_URL: `sqlite:${dir}/app.db`, TLS_CERT_FILE: pair.cert, TLS_KEY_FILE: pair.key, SHUTDOWN_TIMEOUT_MS: '8000', ...env })
  t.teardown(() => { server.child.kill('SIGKILL') })
  return { server, url: new URL(server.base), ca: readFileSync(pair.cert, 'utf8') }
}

async function get (url: string, ca: string, agent: Agent): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = request(url, { ca, agent }, response => {
      // Read the peer certificate now: once the body ends, the socket goes back to the agent.
      const socket = response.socket as unknown as { getPeerCertificate (): { fingerprint256: string } }
      const fingerprint = socket.getPeerCertificate().fingerprint256
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, fingerprint }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('HTTPS in-process with HSTS; SIGHUP swaps the certificate without dropping connections', async t => {
  const dir = t.testdir()
  const first = selfSigned(dir, 'first')
  const live = { cert: `${dir}/live.crt`, key: `${dir}/live.key` }
  execFileSync('cp', [first.cert, live.cert])
  execFileSync('cp', [first.key, live.key])
  const server = await startServer({ DATABASE_URL: `sqlite:${dir}/app.db`, TLS_CERT_FILE: live.cert, TLS_KEY_FILE: live.key })
  t.teardown(() => { server.child.kill('SIGKILL') })
  t.match(server.base, /^https:/)

  const kept = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => kept.destroy())
  const before = await get(`${server.base}/health`, readFileSync(first.cert, 'utf8'), kept)
  t.equal(before.status, 200)
  t.match(before.headers['strict-transport-security'], /max-age=31536000/)

  const second = selfSigned(dir, 'second')
  execFileSync('cp', [second.cert, live.cert])
  execFileSync('cp', [second.key, live.key])
  server.child.kill('SIGHUP')
  for (let i = 0; i < 50 && !server.logs.some(line => line.msg === 'reloaded the TLS certificate'); i++) await new Promise(resolve => setTimeout(resolve, 100))
  t.ok(server.logs.some(line => line.msg === 'reloaded the TLS certificate'))

  const reused = await get(`${server.base}/health`, readFileSync(first.cert, 'utf8'), kept)
  t.equal(reused.status, 200, 'the open connection keeps working')
  t.equal(reused.fingerprint, before.fingerprint, 'on its original certificate')
  const fresh = await get(`${server.base}/health`, readFileSync(second.cert, 'utf8'), new Agent())
  t.equal(fresh.status, 200)
  t.not(fresh.fingerprint, before.fingerprint, 'new connections get the new certificate')

  // A renewal caught half-way (a new certificate beside the old key): the server used to die of it.
  const third = selfSigned(dir, 'third')
  execFileSync('cp', [third.cert, live.cert])
  server.child.kill('SIGHUP')
  for (let i = 0; i < 50 && !server.logs.some(line => line.msg === 'could not reload the TLS certificate; keeping the current one'); i++) await new Promise(resolve => setTimeout(resolve, 100))
  t.match(server.logs.find(line => line.msg === 'could not reload the TLS certificate; keeping the current one'), { err: { message: /TLS_CERT_FILE=.* and TLS_KEY_FILE=.* are not a PEM certificate and its private key/ } })
  const after = await get(`${server.base}/health`, readFileSync(second.cert, 'utf8'), new Agent())
  t.equal(after.status, 200, 'the server is still up')
  t.equal(after.fingerprint, fresh.fingerprint, 'on the certificate it had')
})

t.test('over HTTP/2, a client that resets its stream leaves one line saying when: before its answer, or while it was sent', async t => {
  const { server, ca } = await startHttps(t, 'h2-log', { HTTP2: '1' })
  const session = connect(server.base, { ca })
  t.teardown(() => session.close())
  const linesOf = async (requestId: string): Promise<Array<Record<string, unknown>>> => {
    for (let i = 0; i < 50 && !server.logs.some(line => line.requestId === requestId); i++) await new Promise(resolve => setTimeout(resolve, 100))
    // A second line, were there one, would follow the first at once.
    await new Promise(resolve => setTimeout(resolve, 200))
    return server.logs.filter(line => line.requestId === requestId)
  }
  // Before: a create whose body never comes whole.
  const early = session.request({ ':method': 'POST', ':path': '/v1/projects', 'content-type': 'application/json', 'content-length': '100', authorization: ADMIN, 'x-request-id': 'h2-left-before' })
  early.on('error', () => {})
  early.write('{"name":')
  await new Promise(resolve => setTimeout(resolve, 200))
  early.close(constants.NGHTTP2_CANCEL)
  const before = await linesOf('h2-left-before')
  t.match(before, [{ msg: 'connection closed before the answer', method: 'POST', url: '/v1/projects', responseTime: Number }])
  t.equal(before.length, 1, 'one line, not also a "request completed" with a status never sent')
  t.notOk('statusCode' in before[0]!)
  // During: the document (1.5 MB, far past HTTP/2's 64 KiB window) and a file of the docs UI (sent as a
  // stream), each read no further than its first bytes.
  for (const [name, path] of [['document', '/openapi.json'], ['docs-file', '/docs/static/swagger-ui-bundle.js']] as const) {
    const cut = session.request({ ':path': path, 'x-request-id': `h2-left-during-${name}` })
    cut.on('error', () => {})
    await once(cut, 'data')
    cut.pause()
    await new Promise(resolve => setTimeout(resolve, 200))
    cut.close(constants.NGHTTP2_CANCEL)
    const during = await linesOf(`h2-left-during-${name}`)
    t.match(during, [{ msg: 'connection closed while the answer was sent', url: path, statusCode: 200 }], path)
    t.equal(during.length, 1, `${path}: one line`)
  }
})

t.test('HTTP2=1 serves HTTP/2 over TLS; SIGTERM sends an open session a GOAWAY, lets its stream in flight finish, and the process exits 0', async t => {
  // Idle sessions would outlive the shutdown deadline unless the server closes them.
  const { server, ca } = await startHttps(t, 'h2', { HTTP2: '1', KEEP_ALIVE_TIMEOUT_MS: '60000' })
  const session = connect(server.base, { ca })
  t.teardown(() => session.close())
  const goaway = new Promise<boolean>(resolve => {
    session.once('goaway', () => resolve(true))
    session.once('close', () => resolve(false))
  })
  const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const stream = session.request({ ':path': '/health', 'x-request-id': 'h2-health' })
    stream.on('response', resolve)
    stream.on('error', reject)
    stream.resume()
  })
  t.equal(headers[':status'], 200)
  t.match(headers['strict-transport-security'], /max-age/)
  for (let i = 0; i < 50 && !server.logs.some(line => line.requestId === 'h2-health'); i++) await new Promise(resolve => setTimeout(resolve, 100))
  t.match(server.logs.filter(line => line.requestId === 'h2-health'), [{ msg: 'request completed', statusCode: 200 }], 'a stream answered whole is logged as completed')
  // A CONNECT stream, which Node would end as a bare 405, gets the service's problem.
  const tunnel = session.request({ ':method': 'CONNECT', ':authority': 'db.internal:5432' })
  tunnel.setEncoding('utf8')
  let refusal = ''
  tunnel.on('data', chunk => { refusal += chunk as string })
  const [tunnelHeaders] = await once(tunnel, 'response') as [Record<string, unknown>]
  await once(tunnel, 'end')
  t.match(tunnelHeaders, { ':status': 405, 'content-type': /^application\/problem\+json/, allow: 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS' })
  t.match(JSON.parse(refusal), { status: 405, detail: 'CONNECT is not allowed: this service is no proxy', instance: 'db.internal:5432' })
  // HTTP/1 on the same port is read by the HTTP/2 server's own options: a request without Host gets the service's problem too.
  const http1 = connectTls({ host: '127.0.0.1', port: Number(new URL(server.base).port), ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] })
  let answer = ''
  http1.on('data', chunk => { answer += chunk.toString() })
  http1.end('GET /health HTTP/1.1\r\nConnection: close\r\n\r\n')
  await once(http1, 'end')
  t.match(answer, /^HTTP\/1\.1 400 [^]*\r\ncontent-type: application\/problem\+json[^]*"pointer":"\/host"/)

  // A stream in flight at the signal, its body still coming a second and a half later, is let finish.
  const upload = session.request({ ':method': 'POST', ':path': '/v1/projects', authorization: ADMIN, 'content-type': 'application/json' })
  const uploaded = new Promise<unknown>((resolve, reject) => {
    upload.on('response', answer => { resolve(answer[':status']) })
    upload.on('error', reject)
    upload.resume()
  })
  upload.write('{"name":')
  await new Promise(resolve => setTimeout(resolve, 200))
  server.child.kill('SIGTERM')
  t.equal(await goaway, true, 'the session is told to go away')
  await new Promise(resolve => setTimeout(resolve, 1500))
  upload.end('"sent while draining"}')
  t.equal(await uploaded, 201, 'its stream in flight finished')
  t.same(await server.exited, { code: 0, signal: null }, 'stopped when its work was done, not at the deadline')
  t.notOk(server.logs.some(line => String(line.msg).includes('deadline')))
})

t.test('HTTPS: SIGTERM closes the connections that sent nothing, before, after or during their TLS handshake, and the process exits 0', async t => {
  const { server, url, ca } = await startHttps(t, 'silent')
  const beforeHandshake = connectTcp(Number(url.port), url.hostname)
  const lateHandshake = connectTcp(Number(url.port), url.hostname)
  const afterHandshake = connectTls({ host: url.hostname, port: Number(url.port), ca })
  await Promise.all([once(beforeHandshake, 'connect'), once(lateHandshake, 'connect'), once(afterHandshake, 'secureConnect')])
  const closed = Promise.all([beforeHandshake, lateHandshake, afterHandshake].map(async socket => await once(socket, 'close')))
  server.child.kill('SIGTERM')
  // A handshake that ends while the process drains: the connection then sends nothing either.
  await new Promise(resolve => setTimeout(resolve, 300))
  const late = connectTls({ socket: lateHandshake, host: url.hostname, ca })
  late.on('error', () => {})
  await closed
  t.same(await server.exited, { code: 0, signal: null }, 'stopped without waiting for the deadline')
  t.notOk(server.logs.some(line => String(line.msg).includes('deadline')))
})

t.test('HTTPS: SIGTERM closes, a moment in, a connection stalled in its TLS handshake or in its request, and the process exits 0', async t => {
  const { server, url, ca } = await startHttps(t, 'stalled')
  const inHandshake = connectTcp(Number(url.port), url.hostname)
  const inRequest = connectTls({ host: url.hostname, port: Number(url.port), ca })
  await Promise.all([once(inHandshake, 'connect'), once(inRequest, 'secureConnect')])
  // The first bytes of a ClientHello: a handshake record announcing 512 bytes, of which 4 come.
  inHandshake.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc]))
  inRequest.write('GET /health HTTP/1.1\r\nHost: test\r\n')
  const closed = Promise.all([inHandshake, inRequest].map(async socket => await once(socket, 'close')))
  await new Promise(resolve => setTimeout(resolve, 200))
  const started = Date.now()
  server.child.kill('SIGTERM')
  await closed
  t.same(await server.exited, { code: 0, signal: null }, 'stopped without waiting for the deadline')
  t.ok(Date.now() - started < 5000, 'within the moment given, not the 8 s deadline')
  t.notOk(server.logs.some(line => String(line.msg).includes('deadline')))
})

t.test('plain HTTP beyond loopback is refused at start with what to do', async t => {
  const result = spawnSync(process.execPath, [SERVER_ENTRY], { env: { PATH: process.env.PATH ?? '', HOST: '0.0.0.0', DATABASE_URL: `sqlite:${t.testdir()}/app.db` }, encoding: 'utf8' })
  t.equal(result.status, 1)
  t.match(result.stderr, /HOST=0\.0\.0\.0 would serve plain HTTP beyond this machine: set TLS_CERT_FILE and TLS_KEY_FILE, or TRUST_PROXY/)
})
