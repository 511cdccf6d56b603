import { connect } from 'node:net'
import t from 'tap'
import { assertProblem, buildTestApp, listen, post } from '../helper.js'
import { rawProblem } from '../support/raw-http.js'

t.test('a slowloris client that trickles headers is cut off', async t => {
  const app = await buildTestApp(t, { env: { HEADERS_TIMEOUT_MS: '1000' } })
  const port = Number(new URL(await listen(app)).port)
  const started = Date.now()
  const outcome = await new Promise<string>(resolve => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', chunk => { answer += chunk.toString() })
    socket.on('close', () => resolve(answer))
    socket.on('error', () => resolve(answer))
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n')
    // One header line every 300 ms, never finishing: each write is well within any idle timeout.
    const trickle = setInterval(() => { if (!socket.destroyed) socket.write(`X-Slow-${Date.now()}: 1\r\n`) }, 300)
    socket.on('close', () => clearInterval(trickle))
    setTimeout(() => { clearInterval(trickle); socket.destroy() }, 10_000).unref()
  })
  const elapsed = Date.now() - started
  t.ok(elapsed < 5000, `closed after ${elapsed} ms, not held open`)
  t.match(outcome, /^HTTP\/1\.1 408 /, 'told why')
  t.match(rawProblem(outcome), { status: 408, type: /request-timeout$/, detail: 'the request did not arrive within the time this server waits for one' })
})

t.test('query strings are bounded in length and in number of parameters', async t => {
  const app = await buildTestApp(t)
  assertProblem(t, await app.inject({ method: 'GET', url: `/v1/projects?name=${'a'.repeat(5000)}` }), 414, 'uri-too-long')
  const many = Array.from({ length: 70 }, (_, i) => `p${i}=1`).join('&')
  const problem = assertProblem(t, await app.inject({ method: 'GET', url: `/v1/projects?${many}` }), 400)
  t.equal(problem.detail, 'query has 70 parameters; at most 64 are accepted')
})

t.test('duplicate JSON keys are refused rather than resolved silently', async t => {
  const app = await buildTestApp(t)
  const send = async (payload: string) => await app.inject({ method: 'POST', url: '/v1/projects', payload, headers: { 'content-type': 'application/json' } })
  const problem = assertProblem(t, await send('{"name":"a","name":"b"}'), 400, 'malformed-body')
  t.match(problem.detail, /"name" appears twice/)
  assertProblem(t, await send('{"name":"a","tags":[{"x":1,"x":2}]}'), 400, 'malformed-body')
  t.equal((await send('{"name":"same key in different objects","tags":[]}')).statusCode, 201)
  t.equal((await send('{"name":"a \\"name\\" inside a string"}')).statusCode, 201)
})

t.test('security headers on every response, a stricter policy for the API than for /docs', async t => {
  const app = await buildTestApp(t)
  for (const url of ['/v1/projects', '/v1/nope', '/health']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.headers['content-security-policy'], "default-src 'none';frame-ancestors 'none'", url)
    t.equal(response.headers['x-content-type-options'], 'nosniff')
    t.equal(response.headers['x-frame-options'], 'SAMEORIGIN')
    t.equal(response.headers['referrer-policy'], 'no-referrer')
    t.notOk(response.headers['x-powered-by'])
    t.notOk(response.headers['strict-transport-security'], 'no HSTS over plain HTTP')
  }
  const docs = await app.inject({ method: 'GET', url: '/docs/' })
  t.match(docs.headers['content-security-policy'], /script-src 'self'/)
  const problem = await post(app, '/v1/projects', { name: 'x', nope: 1 })
  t.equal(problem.headers['x-content-type-options'], 'nosniff', 'errors too')

  const proxied = await buildTestApp(t, { env: { TRUST_PROXY: '127.0.0.1' } })
  t.match((await proxied.inject({ method: 'GET', url: '/health' })).headers['strict-transport-security'], /max-age=31536000/, 'HSTS when TLS ends at a trusted proxy')
})
