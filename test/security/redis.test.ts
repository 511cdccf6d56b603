import { randomUUID } from 'node:crypto'
import { connect, createServer, type Server, type Socket } from 'node:net'
import t from 'tap'
import { bearer, buildTestApp, logCollector } from '../helper.js'

const REDIS = { host: '127.0.0.1', port: 6379 }

async function redisAnswers (): Promise<boolean> {
  return await new Promise(resolve => {
    const socket = connect(REDIS.port, REDIS.host)
    socket.setTimeout(1000)
    socket.on('connect', () => { socket.end(); resolve(true) })
    socket.on('error', () => resolve(false))
    socket.on('timeout', () => { socket.destroy(); resolve(false) })
  })
}

/** A TCP proxy in front of Redis that the test can cut and restore, to play an outage without touching Redis. */
async function cuttableProxy (): Promise<{ url: string, cut: () => void, restore: () => Promise<void>, close: () => void }> {
  const sockets = new Set<Socket>()
  let server: Server
  let port = 0
  const start = async (): Promise<void> => {
    server = createServer(client => {
      const upstream = connect(REDIS.port, REDIS.host)
      sockets.add(client).add(upstream)
      client.pipe(upstream).pipe(client)
      const drop = (): void => { client.destroy(); upstream.destroy() }
      client.on('error', drop).on('close', drop)
      upstream.on('error', drop).on('close', drop)
    })
    await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  }
  await start()
  const cut = (): void => {
    server.close()
    for (const socket of sockets) socket.destroy()
    sockets.clear()
  }
  return { url: `redis://127.0.0.1:${port}`, cut, restore: start, close: cut }
}

const skip = await redisAnswers() ? false : `Redis is not reachable at ${REDIS.host}:${REDIS.port}; start it to run this test (CI always has it)`

t.test('with REDIS_URL, two processes share one limit; an outage fails open and the limit recovers', { skip }, async t => {
  const proxy = await cuttableProxy()
  t.teardown(proxy.close)
  const logs = logCollector()
  const env = { RATE_LIMIT_MAX: '4', REDIS_URL: proxy.url, LOG_LEVEL: 'info' }
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
