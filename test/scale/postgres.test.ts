/**
 * PostgreSQL + Redis scale-out, through real server processes: several
 * identical processes on one database, an outage, and durability.
 */
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { ADMIN, bearer, freshSchema, TEST_POSTGRES_URL } from '../helper.js'
import { startServer, type RunningServer } from '../server/spawn.js'
import { answers, cuttableProxy } from '../support/tcp-proxy.js'

const postgresPort = Number(new URL(TEST_POSTGRES_URL).port || 5432)
const skip = await answers(postgresPort) ? false : `PostgreSQL is not reachable at ${TEST_POSTGRES_URL}; start it to run these tests (CI always has it)`
const redisSkip = skip !== false ? skip : await answers(6379) ? false : 'Redis is not reachable at 127.0.0.1:6379; start it to run this test (CI always has it)'

const json = { authorization: ADMIN, 'content-type': 'application/json' }

function stop (t: Test, ...servers: RunningServer[]): void {
  t.teardown(() => { for (const server of servers) server.child.kill('SIGKILL') })
}

t.test('two processes on one PostgreSQL and one Redis behave as one service', { skip: redisSkip }, async t => {
  const env = { DATABASE_URL: await freshSchema(t), REDIS_URL: 'redis://127.0.0.1:6379', RATE_LIMIT_MAX: '5', RATE_LIMIT_SCOPES: 'admin=100000' }
  // Started at once on an empty schema: the migrations must not race.
  const [a, b] = await Promise.all([startServer(env), startServer(env)]) as [RunningServer, RunningServer]
  stop(t, a, b)

  const created = await fetch(`${a.base}/v1/projects`, { method: 'POST', headers: json, body: '{"name":"shared"}' })
  t.equal(created.status, 201)
  const location = created.headers.get('location')!
  const read = await fetch(`${b.base}${location}`, { headers: { authorization: ADMIN } })
  t.equal(read.status, 200, 'a write through one process is read through the other')
  const etag = read.headers.get('etag')!
  t.equal(etag, created.headers.get('etag'), 'and both name it with the same ETag')

  const race = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
    const server = i % 2 === 0 ? a : b
    const response = await fetch(`${server.base}${location}`, { method: 'PATCH', headers: { ...json, 'if-match': etag }, body: JSON.stringify({ budget: i }) })
    await response.arrayBuffer()
    return response.status
  }))
  t.equal(race.filter(status => status === 200).length, 1, 'one PATCH wins across both processes')
  t.equal(race.filter(status => status === 412).length, 11)

  const limited = bearer({ sub: `scale-${randomUUID()}`, scope: 'projects:read' })
  const statuses = []
  for (const server of [a, b, a, b, a, b]) statuses.push((await fetch(`${server.base}/v1/projects`, { headers: { authorization: limited } })).status)
  t.same(statuses, [200, 200, 200, 200, 200, 429], 'the rate limit is shared')
})

t.test('a PostgreSQL outage: /ready 503 and requests 503 quickly, then recovery by itself', { skip }, async t => {
  const schema = new URL(await freshSchema(t))
  const proxy = await cuttableProxy(postgresPort)
  t.teardown(() => { proxy.cut() })
  schema.port = String(proxy.port)
  schema.hostname = '127.0.0.1'
  const server = await startServer({ DATABASE_URL: schema.toString(), DATABASE_TIMEOUT_MS: '1000' })
  stop(t, server)
  t.equal((await fetch(`${server.base}/ready`)).status, 200)
  const project = await fetch(`${server.base}/v1/projects`, { method: 'POST', headers: json, body: '{"name":"before the outage"}' })
  t.equal(project.status, 201)

  proxy.cut()
  const started = Date.now()
  const ready = await fetch(`${server.base}/ready`)
  t.equal(ready.status, 503)
  const request = await fetch(`${server.base}/v1/projects`, { headers: { authorization: ADMIN } })
  t.equal(request.status, 503, 'requests get a 503 problem, not a hang')
  t.match(request.headers.get('content-type'), /application\/problem\+json/)
  t.equal(request.headers.get('retry-after'), '5', 'says when to try again')
  t.ok(Date.now() - started < 8000, `answered within ${Date.now() - started} ms`)
  // The admin collections too: their store methods (credentials.apiKeys.list…) are guarded like the resources'.
  for (const path of ['/v1/api-keys?limit=2', '/v1/clients', '/v1/webhooks/1']) {
    const admin = await fetch(`${server.base}${path}`, { headers: { authorization: ADMIN } })
    t.equal(admin.status, 503, `${path}: 503`)
    t.match(admin.headers.get('content-type'), /application\/problem\+json/)
  }
  // Writes too: each is one statement sent alone (no subscription), or its batched read, and either fails as a 503.
  const writes = [
    await fetch(`${server.base}/v1/projects`, { method: 'POST', headers: json, body: '{"name":"during the outage"}' }),
    await fetch(`${server.base}${project.headers.get('location')!}`, { method: 'PATCH', headers: json, body: '{"budget":5}' }),
    await fetch(`${server.base}${project.headers.get('location')!}`, { method: 'DELETE', headers: { authorization: ADMIN } })
  ]
  t.same(writes.map(answer => answer.status), [503, 503, 503], 'POST, PATCH and DELETE: 503')
  t.ok(writes.every(answer => /application\/problem\+json/.test(answer.headers.get('content-type') ?? '')), 'each a problem')
  t.equal((await fetch(`${server.base}/health`)).status, 200, 'the process itself is alive')

  await proxy.restore()
  let status = 0
  for (let i = 0; i < 50 && status !== 200; i++) {
    await new Promise(resolve => setTimeout(resolve, 200))
    status = (await fetch(`${server.base}/ready`)).status
  }
  t.equal(status, 200, 'ready again without a restart')
  t.equal((await fetch(`${server.base}/v1/projects`, { headers: { authorization: ADMIN } })).status, 200)
  const after = await fetch(`${server.base}${project.headers.get('location')!}`, { method: 'PATCH', headers: json, body: '{"budget":6}' })
  t.equal(after.status, 200, 'and writes land again')
  t.equal(((await after.json()) as { budget: number }).budget, 6)
})

t.test('acknowledged writes survive SIGKILL on PostgreSQL', { skip }, async t => {
  const env = { DATABASE_URL: await freshSchema(t) }
  const first = await startServer(env)
  const acknowledged: number[] = []
  const state = { writing: true }
  const writers = Array.from({ length: 8 }, async (_, w) => {
    for (let i = 0; state.writing; i++) {
      try {
        const response = await fetch(`${first.base}/v1/projects`, { method: 'POST', headers: json, body: JSON.stringify({ name: `w${w}-${i}` }) })
        if (response.status === 201) acknowledged.push((await response.json() as { id: number }).id)
      } catch {
        return
      }
    }
  })
  while (acknowledged.length < 60) await new Promise(resolve => setTimeout(resolve, 20))
  first.child.kill('SIGKILL')
  state.writing = false
  await Promise.all(writers)
  await first.exited

  const second = await startServer(env)
  stop(t, second)
  const ids = new Set<number>()
  for (let url: string | null = '/v1/projects?limit=100&cursor='; url !== null;) {
    const response = await fetch(`${second.base}${url}`, { headers: { authorization: ADMIN } })
    for (const item of await response.json() as Array<{ id: number }>) ids.add(item.id)
    url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1] ?? null
  }
  const missing = acknowledged.filter(id => !ids.has(id))
  t.same(missing, [], `all ${acknowledged.length} acknowledged writes are there`)
})
