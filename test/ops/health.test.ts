import t from 'tap'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import { openStore } from '../../src/store/open.js'
import type { Store } from '../../src/store/store.js'
import { assertProblem, body, buildTestApp, testStoreOptions } from '../helper.js'

t.test('/health and /ready answer 200 without credentials', async t => {
  const app = await buildTestApp(t)
  const health = await app.inject({ method: 'GET', url: '/health' })
  t.equal(health.statusCode, 200)
  t.same(body(health), { status: 'ok' })
  const ready = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(ready.statusCode, 200)
  t.same(body(ready), { status: 'ready' })
  t.equal((await app.inject({ method: 'HEAD', url: '/health' })).statusCode, 200)
})

t.test('/ready is 503 while the database does not answer, and recovers', async t => {
  const real = await openStore(buildModel(resources), await testStoreOptions(t))
  let reachable = true
  const flaky: Store = {
    ...real,
    migrate: async () => await real.migrate(),
    close: async () => await real.close(),
    ping: async () => {
      if (!reachable) throw new Error('connect ECONNREFUSED')
      await real.ping()
    }
  }
  const app = await buildTestApp(t, { store: flaky })
  reachable = false
  const down = await app.inject({ method: 'GET', url: '/ready' })
  const problem = assertProblem(t, down, 503, 'unavailable')
  t.notMatch(problem.detail, /ECONNREFUSED/, 'the cause stays in the log')
  t.equal(down.headers['retry-after'], '5', 'says when to try again')
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'liveness does not depend on the database')
  reachable = true
  t.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200)
})

t.test('/ready requests that come while a ping is under way share it: a flood of probes holds one database connection, not one each', async t => {
  const real = await openStore(buildModel(resources), await testStoreOptions(t))
  let pings = 0
  let answer: () => void = () => {}
  const slow: Store = {
    ...real,
    migrate: async () => await real.migrate(),
    close: async () => await real.close(),
    ping: async () => {
      pings++
      await new Promise<void>(resolve => { answer = resolve })
    }
  }
  const app = await buildTestApp(t, { store: slow })
  await app.ready()
  const started = pings
  const probes = Array.from({ length: 20 }, async () => await app.inject({ method: 'GET', url: '/ready' }))
  await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(pings - started, 1, 'twenty probes at once: one ping')
  answer()
  t.same((await Promise.all(probes)).map(response => response.statusCode), Array(20).fill(200), 'each gets its answer')
  const next = app.inject({ method: 'GET', url: '/ready' })
  await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(pings - started, 2, 'a probe after the answer pings again: readiness is never stale')
  answer()
  t.equal((await next).statusCode, 200)
})
