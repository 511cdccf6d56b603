import { randomUUID } from 'node:crypto'
import { Socket } from 'node:net'
import t from 'tap'
import { bearer, buildTestApp, logCollector } from '../helper.js'
import { answers, cuttableProxy } from '../support/tcp-proxy.js'

const REDIS = { host: '127.0.0.1', port: 6379 }

const skip = await answers(REDIS.port, REDIS.host) ? false : `Redis is not reachable at ${REDIS.host}:${REDIS.port}; start it to run this test (CI always has it)`

t.test('with REDIS_URL, two processes share one limit; an outage fails open and the limit recovers', { skip }, async t => {
  const proxy = await cuttableProxy(REDIS.port)
  t.teardown(() => { proxy.cut() })
  const logs = logCollector()
  const env = { RATE_LIMIT_MAX: '4', REDIS_URL: `redis://127.0.0.1:${proxy.port}`, LOG_LEVEL: 'info' }
  const first = await buildTestApp(t, { env, logStream: logs })
  const second = await buildTestApp(t, { env })
  // A subject of its own, so earlier runs against the same Redis do not count.
  const authorization = bearer({ sub: `shared-${randomUUID()}`, scope: 'projects:read' })
  const get = async (app: typeof first) => await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization } })

  const statuses = []
  for (const app of [first, second, first, second, first, second]) statuses.push((await get(app)).statusCode)
  t.same(statuses, [200, 200, 200, 200, 429, 429], 'the limit is global across both instances')

  proxy.cut()
  const during = await get(first)
  t.equal(during.statusCode, 200, 'Redis down: requests are still served')
  t.ok(logs.lines.some(line => /Redis is unreachable/.test(String(line.msg))), 'and the outage is logged')

  await proxy.restore()
  let recovered = 0
  for (let attempt = 0; attempt < 100 && recovered !== 429; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 100))
    recovered = (await get(second)).statusCode
  }
  t.equal(recovered, 429, 'once Redis is back, the shared count applies again')
})

t.test("a turn's counting commands reach Redis in one write, and each request is still counted", { skip }, async t => {
  const authorization = bearer({ sub: `batched-${randomUUID()}`, scope: 'projects:read' })
  const app = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '25', REDIS_URL: `redis://${REDIS.host}:${REDIS.port}` } })
  const get = async () => await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization } })
  t.equal((await get()).statusCode, 200, 'a first request loads the counting script')

  // Every write a socket to Redis hands to the kernel, with the commands it carries.
  const writes: number[] = []
  const { _write: write, _writev: writev } = Socket.prototype
  const commands = (data: unknown): number => String(data).match(/evalsha/gi)?.length ?? 0
  const toRedis = (socket: Socket): boolean => socket.remotePort === REDIS.port
  Socket.prototype._write = function (this: Socket, chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void) {
    if (toRedis(this)) writes.push(commands(chunk))
    write.call(this, chunk, encoding, callback)
  }
  Socket.prototype._writev = function (this: Socket, chunks: Array<{ chunk: unknown, encoding: BufferEncoding }>, callback: (error?: Error | null) => void) {
    if (toRedis(this)) writes.push(chunks.reduce((sum, { chunk }) => sum + commands(chunk), 0))
    writev!.call(this, chunks, callback)
  }
  t.teardown(() => { Object.assign(Socket.prototype, { _write: write, _writev: writev }) })

  const burst = await Promise.all(Array.from({ length: 20 }, get))
  t.same(burst.map(response => response.statusCode), Array(20).fill(200))
  t.same(writes, [20], 'the 20 requests of one turn: one write of 20 commands')
  const remaining = burst.map(response => Number(response.headers['x-ratelimit-remaining'])).sort((a, b) => b - a)
  t.same(remaining, Array.from({ length: 20 }, (_, i) => 23 - i), 'each counted once, in turn')

  writes.length = 0
  t.equal((await get()).statusCode, 200)
  t.equal((await get()).headers['x-ratelimit-remaining'], '2', 'and later turns are sent too')
  t.same(writes, [1, 1], 'a request alone in its turn is one write, at its end')
})
