import { randomUUID } from 'node:crypto'
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
