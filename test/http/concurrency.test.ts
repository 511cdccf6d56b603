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
