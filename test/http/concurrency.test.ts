import t from 'tap'
import { ADMIN, body, buildTestApp, listen, post } from '../helper.js'

t.test('N concurrent PATCHes with the same If-Match: exactly one wins, the rest 412', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/projects', { name: 'raced', budget: 0 })
  const url = `${await listen(app)}/v1/projects/${body(created).id as number}`
  const etag = created.headers.etag as string
  const statuses = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const response = await fetch(url, {
      method: 'PATCH',
      headers: { authorization: ADMIN, 'content-type': 'application/merge-patch+json', 'if-match': etag },
      body: JSON.stringify({ budget: i + 1 })
    })
    await response.arrayBuffer()
    return response.status
  }))
  t.equal(statuses.filter(status => status === 200).length, 1, 'one winner')
  t.equal(statuses.filter(status => status === 412).length, 19, 'every other request failed its precondition')
  const final = await (await fetch(url, { headers: { authorization: ADMIN } })).json() as { budget: number }
  t.ok(final.budget >= 1 && final.budget <= 20)
})

t.test('concurrent writes without If-Match are applied one after another, none lost', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/projects', { name: 'busy' })
  const url = `${await listen(app)}/v1/projects/${body(created).id as number}`
  const statuses = await Promise.all(Array.from({ length: 15 }, async (_, i) => {
    const response = await fetch(url, { method: 'PATCH', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: JSON.stringify({ budget: i }) })
    await response.arrayBuffer()
    return response.status
  }))
  t.same(new Set(statuses), new Set([200]))
  const final = await fetch(url, { headers: { authorization: ADMIN } })
  const first = created.headers.etag as string
  const version = (tag: string): number => Number(tag.replace(/"/g, '').split('.').at(-1))
  t.equal(version(final.headers.get('etag')!), version(first) + 15, 'every write produced its own version')
})

t.test('120 racing writers without If-Match all land, each on a version of its own', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/projects', { name: 'crowded' })
  const url = `${await listen(app)}/v1/projects/${body(created).id as number}`
  const racers = 120
  const responses = await Promise.all(Array.from({ length: racers }, async (_, i) => {
    const response = await fetch(url, { method: 'PATCH', headers: { authorization: ADMIN, 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ budget: i }) })
    const json = await response.json() as { budget?: number }
    return { status: response.status, etag: response.headers.get('etag'), budget: json.budget }
  }))
  t.same(new Set(responses.map(response => response.status)), new Set([200]))
  t.equal(new Set(responses.map(response => response.etag)).size, racers, 'every write answered with a version of its own')
  const final = await fetch(url, { headers: { authorization: ADMIN } })
  const version = (tag: string): number => Number(tag.replace(/"/g, '').split('.').at(-1))
  const last = responses.find(response => response.etag === final.headers.get('etag'))
  t.equal(version(final.headers.get('etag')!), version(created.headers.etag as string) + racers)
  t.equal(((await final.json()) as { budget: number }).budget, last?.budget, 'the stored record is the one the last write answered with')
})

t.test('concurrent PATCHes with If-Match: * are all applied: a lost race does not make the record absent', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/projects', { name: 'starred' })
  const url = `${await listen(app)}/v1/projects/${body(created).id as number}`
  const statuses = await Promise.all(Array.from({ length: 15 }, async (_, i) => {
    const response = await fetch(url, { method: 'PATCH', headers: { authorization: ADMIN, 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ budget: i }) })
    await response.arrayBuffer()
    return response.status
  }))
  t.same(new Set(statuses), new Set([200]))
  const final = await fetch(url, { headers: { authorization: ADMIN } })
  const version = (tag: string): number => Number(tag.replace(/"/g, '').split('.').at(-1))
  t.equal(version(final.headers.get('etag')!), version(created.headers.etag as string) + 15)
})

t.test('writes committed together: each one succeeds or fails on its own', async t => {
  const app = await buildTestApp(t)
  const project = body(await post(app, '/v1/projects', { name: 'home' }))
  // Sent at once, so they share commits: good tasks, tasks of a missing project (400), and clashing project names (409).
  const requests = Array.from({ length: 30 }, (_, i) => i % 3 === 0
    ? { url: '/v1/tasks', body: { name: `task ${i}`, projectId: project.id } }
    : i % 3 === 1
      ? { url: '/v1/tasks', body: { name: `orphan ${i}`, projectId: 999_999 } }
      : { url: '/v1/projects', body: { name: 'clash' } })
  const statuses = await Promise.all(requests.map(async ({ url, body: payload }) => `${url} ${(await post(app, url, payload)).statusCode}`))
  const tally = (entry: string): number => statuses.filter(status => status === entry).length
  t.equal(tally('/v1/tasks 201'), 10, 'every good task created')
  t.equal(tally('/v1/tasks 400'), 10, 'every orphan refused')
  t.equal(tally('/v1/projects 201'), 1, 'one project took the name')
  t.equal(tally('/v1/projects 409'), 9, 'the others clashed')
  const tasks = await app.inject({ method: 'GET', url: '/v1/tasks?limit=100' })
  t.equal(tasks.headers['x-total-count'], '10', 'exactly the acknowledged tasks are stored')
  const names = (body(tasks) as unknown as Array<{ name: string }>).map(task => task.name)
  t.notOk(names.some(name => name.startsWith('orphan')), 'no refused write was committed with its group')
})
