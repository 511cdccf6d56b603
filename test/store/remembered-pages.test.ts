/**
 * On SQLite a page of a list is remembered with the change stamp (as counts
 * are) and given back while nothing has changed. These tests hold it to the
 * truth: every kind of write, through the service or by another connection
 * that bypasses it, is seen by the next request for the same page; callers who
 * see different records never share a page; and a page is read once however
 * many requests want it unchanged. Runs on SQLite and PostgreSQL, where the
 * stamp is a query of its own: there a page is remembered only when it is
 * read with its count (page-based lists), which reads the stamp anyway, and
 * a page without its count (a cursor page) is read once for the requests of
 * one turn that want it (turn-shared.ts), and again in the next.
 */
import t from 'tap'
import { where } from '../../src/resources/define.js'
import type { ListQuery } from '../../src/store/store.js'
import { bearer, body, buildTestApp, createProject, post, type Json } from '../helper.js'
import { otherConnection } from '../support/other-connection.js'
import { recordingStore } from '../support/recording-store.js'

const names = (records: Json[]): string[] => records.map(record => record.name as string)

t.test('the same page asked again shows every write made in between, by the service or another connection', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const project = await createProject(app)
  const page = async (url: string): Promise<string[]> => {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 200, url)
    return names(body(response) as Json[])
  }
  const first = '/v1/tasks?limit=3'
  const sorted = '/v1/tasks?status=todo&sort=-priority&limit=3'
  t.same(await page(first), [], 'an empty collection')
  t.same(await page(sorted), [])

  const created = []
  for (const [name, priority] of [['a', 1], ['b', 3], ['c', 2]] as const) {
    created.push(body(await post(app, '/v1/tasks', { name, projectId: project.id, priority })).id as number)
  }
  t.same(await page(first), ['a', 'b', 'c'], 'creates through the service are seen')
  t.same(await page(sorted), ['b', 'c', 'a'])
  t.same(await page(first), ['a', 'b', 'c'], 'and the page is the same when asked again')

  t.equal((await app.inject({ method: 'PATCH', url: `/v1/tasks/${created[0]!}`, payload: { name: 'a2', priority: 5 } })).statusCode, 200)
  t.same(await page(first), ['a2', 'b', 'c'], 'an update through the service is seen')
  t.same(await page(sorted), ['a2', 'b', 'c'], 'and moves the record in a sorted page')

  await db.run(`update tasks set name = 'b2', version = version + 1 where id = ${created[1]!}`)
  t.same(await page(first), ['a2', 'b2', 'c'], 'an update by another connection is seen')
  await db.run(`update tasks set status = 'done' where id = ${created[0]!}`)
  t.same(await page(sorted), ['b2', 'c'], 'a change of a filtered column by another connection is seen')
  await db.run(`insert into tasks (version, "createdAt", "updatedAt", name, "projectId", status, priority) values (1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'z', ${project.id as number}, 'todo', 4)`)
  t.same(await page(sorted), ['z', 'b2', 'c'], 'an insert by another connection is seen')
  await db.run(`delete from tasks where id = ${created[2]!}`)
  t.same(await page(first), ['a2', 'b2', 'z'], 'a delete by another connection is seen')

  t.equal((await app.inject({ method: 'DELETE', url: `/v1/tasks/${created[1]!}` })).statusCode, 204)
  t.same(await page(first), ['a2', 'z'], 'a delete through the service is seen')
  t.same(await page(sorted), ['z'])
})

t.test('callers who see different records never get one another\'s page', async t => {
  const app = await buildTestApp(t)
  const alice = bearer({ sub: 'alice', scope: 'notes:read notes:write' })
  const bob = bearer({ sub: 'bob', scope: 'notes:read notes:write' })
  await post(app, '/v1/notes', { name: 'alice 1' }, { authorization: alice })
  await post(app, '/v1/notes', { name: 'bob 1' }, { authorization: bob })
  // A page with its count (remembered), and a cursor page (on PostgreSQL shared by the requests of a turn).
  for (const url of ['/v1/notes?limit=5', '/v1/notes?limit=5&cursor=']) {
    for (let round = 0; round < 2; round++) {
      const callers = [alice, bob, undefined, alice, bob, undefined]
      const seen = await Promise.all(callers.map(async authorization => await app.inject({
        method: 'GET', url, ...(authorization === undefined ? {} : { headers: { authorization } })
      })))
      t.same(seen.map(response => names(body(response) as Json[])), [['alice 1'], ['bob 1'], ['alice 1', 'bob 1'], ['alice 1'], ['bob 1'], ['alice 1', 'bob 1']],
        `${url}, round ${round + 1}: alice and bob each see their own, an admin both, however many ask together`)
      t.equal(new Set(seen.map(response => response.headers.etag)).size, 3, 'each view its own tag')
    }
  }
})

t.test('cursor pages asked for together are each answered whole, and a write before the next turn is seen', async t => {
  const { store, sent } = await recordingStore(t)
  const app = await buildTestApp(t, { store })
  const project = await createProject(app)
  for (const name of ['a', 'b', 'c']) await post(app, '/v1/tasks', { name, projectId: project.id })
  const urls = ['/v1/tasks?limit=2&cursor=', '/v1/tasks?limit=2&cursor=', '/v1/tasks?limit=2&cursor=&fields=name', '/v1/tasks?limit=3&cursor=']
  const pageReads = (): number => sent.filter(query => /from "tasks"/.test(query.sql) && /\blimit\b/i.test(query.sql)).length
  sent.length = 0
  const together = await Promise.all(urls.map(async url => await app.inject({ method: 'GET', url })))
  t.same(together.map(response => response.statusCode), [200, 200, 200, 200])
  t.same(together.map(response => names(body(response) as Json[])), [['a', 'b'], ['a', 'b'], ['a', 'b'], ['a', 'b', 'c']])
  t.same(Object.keys(body(together[2]!)[0] as Json).sort(), ['id', 'links', 'name'], 'fields=name keeps its own fields')
  t.equal(together[0]!.headers.etag, together[1]!.headers.etag, 'the same page, the same tag')
  t.not(together[2]!.headers.etag, together[0]!.headers.etag, 'another body, another tag')
  t.match(together[0]!.headers.link, /rel="next"/, 'a page of 2 of 3 leads on')
  t.notMatch(together[3]!.headers.link, /rel="next"/, 'a page of all 3 does not')
  t.equal(pageReads(), 2, 'the three requests of limit=2 read their 3 rows once; limit=3 reads its 4')

  await post(app, '/v1/tasks', { name: 'a0', projectId: project.id })
  const after = await Promise.all(urls.slice(0, 2).map(async url => await app.inject({ method: 'GET', url: `${url}&sort=name` })))
  t.same(after.map(response => names(body(response) as Json[])), [['a', 'a0'], ['a', 'a0']], 'a create answered before the requests is seen by them')
})

t.test('a page given back again is sent as each request asks: its fields, its cursor links, its tag', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  for (const name of ['a', 'b', 'c']) await post(app, '/v1/tasks', { name, projectId: project.id, status: 'doing', priority: 2 })
  const get = async (url: string, headers: Record<string, string> = {}) => await app.inject({ method: 'GET', url, headers })
  for (let round = 1; round <= 2; round++) {
    const whole = await get('/v1/tasks?limit=2')
    const named = await get('/v1/tasks?limit=2&fields=name')
    const statuses = await get('/v1/tasks?limit=2&fields=status')
    t.same(body(whole).map((task: Json) => Object.keys(task).sort()), Array(2).fill(['createdAt', 'id', 'links', 'name', 'priority', 'projectId', 'status', 'updatedAt']), `round ${round}: every field`)
    t.same(body(named), body(whole).map((task: Json) => ({ id: task.id, links: task.links, name: task.name })), `round ${round}: fields=name`)
    t.same(body(statuses), body(whole).map((task: Json) => ({ id: task.id, links: task.links, status: task.status })), `round ${round}: fields=status`)
    t.equal(new Set([whole, named, statuses].map(response => response.headers.etag)).size, 3, `round ${round}: each body its own tag`)

    const first = await get('/v1/tasks?limit=2&sort=name&cursor=')
    t.same(names(body(first) as Json[]), ['a', 'b'], `round ${round}: a cursor page`)
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link as string)?.[1]
    t.ok(next, `round ${round}: with its next link`)
    t.same(names(body(await get(next!)) as Json[]), ['c'], `round ${round}: which leads on`)

    // The same rows read: a page of 3, and a cursor page of 2 that reads one more to know whether a next page is.
    const three = await get('/v1/tasks?limit=3')
    const two = await get('/v1/tasks?limit=2&cursor=')
    t.same(names(body(three) as Json[]), ['a', 'b', 'c'], `round ${round}: a page of 3`)
    t.same(names(body(two) as Json[]), ['a', 'b'], `round ${round}: a cursor page of 2 from the same rows`)
    t.not(two.headers.etag, three.headers.etag, `round ${round}: each with its own tag`)

    const revalidated = await get('/v1/tasks?limit=2', { 'if-none-match': whole.headers.etag as string })
    t.equal(revalidated.statusCode, 304, `round ${round}: the page's tag revalidates it`)
    t.equal(revalidated.body, '')
    t.equal(revalidated.headers['x-total-count'], '3', `round ${round}: with its count`)
    const head = await app.inject({ method: 'HEAD', url: '/v1/tasks?limit=2' })
    t.equal(head.statusCode, 200)
    t.equal(head.headers.etag, whole.headers.etag, `round ${round}: HEAD has the same tag`)
    t.equal(head.body, '', 'and no body')
  }
})

t.test('requests that want the same unchanged page read it once between them', async t => {
  const { store, sent, model, dialect } = await recordingStore(t)
  const projects = model.get('projects')
  for (const name of ['one', 'two', 'three']) await store.insert(projects, { name, budget: 10, active: true, tags: [] })
  const query: ListQuery = { where: [where('active', 'eq', true)], orderBy: [{ field: 'name', direction: 'asc' }], limit: 2, offset: 0 }
  const reads = (): number => sent.filter(sent => /from "projects"/.test(sent.sql) && /\blimit\b/i.test(sent.sql)).length
  sent.length = 0

  const pages = await Promise.all(Array.from({ length: 20 }, async () => await store.list(projects, query)))
  for (const page of pages) t.same(page.map(record => record.values.name), ['one', 'three'])
  t.equal(reads(), 1, 'the 20 requests of one turn read the page once between them')
  t.same((await store.list(projects, query)).map(record => record.values.name), ['one', 'three'])
  t.equal(reads(), dialect.localChangeStamp ? 1 : 2, dialect.localChangeStamp ? 'SQLite: and the next request is given it back' : 'PostgreSQL: a page without its count is read again in the next turn')

  // With its count, as page-based lists ask for it, the page is remembered on both.
  sent.length = 0
  const counted = await Promise.all(Array.from({ length: 20 }, async () => await store.countedPage(projects, query)))
  for (const { records, total } of counted) {
    t.same(records.map(record => record.values.name), ['one', 'three'])
    t.equal(total, 3)
  }
  t.equal(reads(), dialect.localChangeStamp ? 0 : 1, dialect.localChangeStamp ? 'SQLite: the page list() remembered' : 'PostgreSQL: 20 requests, one read of the page')
  sent.length = 0

  await store.insert(projects, { name: 'a first', budget: 10, active: true, tags: [] })
  t.same((await store.list(projects, query)).map(record => record.values.name), ['a first', 'one'], 'a write is seen')
  const again = await store.countedPage(projects, query)
  t.same([again.records.map(record => record.values.name), again.total], [['a first', 'one'], 4], 'by a counted page too')
  t.equal(reads(), dialect.localChangeStamp ? 1 : 2, 'by reading the page again')

  // A page of more rows than a list may ask for is never held.
  const long = { ...query, limit: 150 }
  sent.length = 0
  await store.list(projects, long)
  await store.countedPage(projects, long)
  t.equal(reads(), 2, 'a page longer than a cursor page of 100 is read every time')
})

t.test('a page and its count started together read the change stamp once, and the next request reads it anew', async t => {
  const { store, stampReads, model } = await recordingStore(t)
  const projects = model.get('projects')!
  const query: ListQuery = { where: [], orderBy: [{ field: 'id', direction: 'asc' }], limit: 5, offset: 0 }
  const listed = async (): Promise<[number, number]> => {
    stampReads.count = 0
    const { records, total } = await store.countedPage(projects, query)
    t.equal(records.length, total, 'the page and the count agree')
    return [total, stampReads.count]
  }
  t.same(await listed(), [0, 1], 'one stamp read for both')
  await store.insert(projects, { name: 'one', active: true, tags: [], description: undefined, budget: undefined })
  t.same(await listed(), [1, 1], 'the write is seen by the next pair, which read the stamp again')
  await store.insert(projects, { name: 'two', active: true, tags: [], description: undefined, budget: undefined })
  t.same(await listed(), [2, 1])
})
