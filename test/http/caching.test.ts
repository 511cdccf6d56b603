import { Type } from '@sinclair/typebox'
import t from 'tap'
import { belongsTo, defineResource, hasMany } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, createProject, post, type Json } from '../helper.js'

t.test('Cache-Control and Vary on every response', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  const cases: Array<[string, string, string]> = [
    ['GET', `/v1/projects/${project.id as number}`, 'private, no-cache'],
    ['HEAD', `/v1/projects/${project.id as number}`, 'private, no-cache'],
    ['GET', '/v1/projects', 'private, no-cache'],
    ['GET', '/v1/projects/999', 'no-store'],
    ['GET', '/v1/projects/abc', 'no-store'],
    ['PATCH', `/v1/projects/${project.id as number}`, 'no-store'],
    ['DELETE', '/v1/projects/998', 'no-store'],
    ['GET', '/nope', 'no-store'],
    ['GET', '/health', 'no-store']
  ]
  for (const [method, url, expected] of cases) {
    const response = await app.inject({ method: method as 'GET', url, ...(method === 'PATCH' ? { payload: { budget: 1 } } : {}) })
    t.equal(response.headers['cache-control'], expected, `${method} ${url}`)
    t.match(response.headers.vary, /Authorization/)
    t.match(response.headers.vary, /Api-Version/)
  }
  const created = await post(app, '/v1/projects', { name: 'fresh' })
  t.equal(created.headers['cache-control'], 'no-store', 'writes are not stored')
  const unauthenticated = await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: undefined } })
  t.equal(unauthenticated.headers['cache-control'], 'no-store')
})

t.test('a resource may declare a max-age, which holds on its related paths too', async t => {
  // Albums (revalidated on every read) hold stamps (reusable for a minute).
  const albums = defineResource({ collection: 'albums', fields: Type.Object({ name: Type.String() }), relations: { stamps: hasMany('stamps', { foreignKey: 'albumId' }) } })
  const stamps = defineResource({ collection: 'stamps', fields: Type.Object({ name: Type.String(), albumId: Type.Integer() }), relations: { album: belongsTo('albums', { foreignKey: 'albumId' }) }, cache: { maxAge: 60 } })
  const app = await buildTestApp(t, { definitions: [albums, stamps] })
  const album = body(await post(app, '/v1/albums', { name: 'red' })).id as number
  const stamp = body(await post(app, '/v1/stamps', { name: 'blue', albumId: album }))
  t.equal((await app.inject({ method: 'GET', url: `/v1/stamps/${stamp.id as number}` })).headers['cache-control'], 'private, max-age=60')
  t.equal((await app.inject({ method: 'GET', url: '/v1/stamps' })).headers['cache-control'], 'private, max-age=60')
  t.equal((await app.inject({ method: 'GET', url: `/v1/albums/${album}/stamps` })).headers['cache-control'], 'private, max-age=60', 'a list of stamps, wherever it is read')
  t.equal((await app.inject({ method: 'GET', url: `/v1/albums/${album}` })).headers['cache-control'], 'private, no-cache', 'the album keeps its own policy')
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  t.equal(document.paths['/v1/albums/{id}/stamps'].get.responses['200'].headers['Cache-Control'].description, '`private, max-age=60`', 'and is documented so')
})

t.test('ETag and Last-Modified: change with every write, equal for equal state; 304 revalidation', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/projects', { name: 'tagged' })
  const id = body(created).id as number
  const url = `/v1/projects/${id}`
  const etag = created.headers.etag as string
  t.match(etag, /^"[^"]+"$/, 'a strong ETag on create')
  const read = await app.inject({ method: 'GET', url })
  t.equal(read.headers.etag, etag, 'the same state, the same tag')
  t.equal(read.headers['last-modified'], new Date(body(read).updatedAt).toUTCString())
  t.equal((await app.inject({ method: 'GET', url })).headers.etag, etag)

  const revalidated = await app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })
  t.equal(revalidated.statusCode, 304)
  t.equal(revalidated.body, '')
  t.equal(revalidated.headers.etag, etag)
  t.equal(revalidated.headers['cache-control'], 'private, no-cache')
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-none-match': `"other", W/${etag}` } })).statusCode, 304, 'weak comparison, in a list')
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-none-match': '*' } })).statusCode, 304)
  const head304 = await app.inject({ method: 'HEAD', url, headers: { 'if-none-match': etag } })
  t.equal(head304.statusCode, 304)
  t.equal(head304.headers['content-length'], undefined, 'a 304 carries no Content-Length but the 200\'s (RFC 9110 §8.6); Fastify\'s HEAD route set 0')
  const lastModified = read.headers['last-modified'] as string
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-modified-since': lastModified } })).statusCode, 304)
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-none-match': '"nope"', 'if-modified-since': lastModified } })).statusCode, 200, 'If-None-Match wins over If-Modified-Since')

  const patched = await app.inject({ method: 'PATCH', url, payload: { budget: 5 } })
  t.not(patched.headers.etag, etag, 'a write changes the tag')
  const same = await app.inject({ method: 'PATCH', url, payload: { budget: 5 } })
  t.not(same.headers.etag, patched.headers.etag, 'every write changes it, even one that changes no field')
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })).statusCode, 200, 'an old tag no longer matches')
})

t.test('lists carry an ETag too and revalidate to 304', async t => {
  const app = await buildTestApp(t)
  await createProject(app)
  const list = await app.inject({ method: 'GET', url: '/v1/projects' })
  const etag = list.headers.etag as string
  t.match(etag, /^W\/"/)
  const again = await app.inject({ method: 'GET', url: '/v1/projects', headers: { 'if-none-match': etag } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.equal(again.headers['content-length'], undefined)
  const head = await app.inject({ method: 'HEAD', url: '/v1/projects', headers: { 'if-none-match': etag } })
  t.equal(head.statusCode, 304)
  t.equal(head.headers['content-length'], undefined, 'nor does the 304 of a HEAD')
  await createProject(app)
  const changed = await app.inject({ method: 'GET', url: '/v1/projects', headers: { 'if-none-match': etag } })
  t.equal(changed.statusCode, 200)
  t.not(changed.headers.etag, etag)
})

t.test('If-Match on a list: its ETag is weak, so only * holds and any tag is 412 (RFC 9110 §13.1.1)', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  for (const url of ['/v1/projects', `/v1/projects/${project.id as number}/tasks`, '/v1/projects?cursor=']) {
    const list = await app.inject({ method: 'GET', url })
    const etag = list.headers.etag as string
    for (const ifMatch of [etag, etag.slice(2), '"other"']) {
      const failed = assertProblem(t, await app.inject({ method: 'GET', url, headers: { 'if-match': ifMatch } }), 412, 'precondition-failed')
      t.match(failed.detail, /only If-Match: \* can hold/, `GET ${url} with If-Match ${ifMatch}`)
      t.notOk(failed.headers, 'a problem body, not a page')
    }
    const head = await app.inject({ method: 'HEAD', url, headers: { 'if-match': etag } })
    t.equal(head.statusCode, 412, `HEAD ${url}`)
    t.notOk(head.headers['x-total-count'], 'the 412 has no page headers')
    const any = await app.inject({ method: 'GET', url, headers: { 'if-match': '*' } })
    t.equal(any.statusCode, 200, `GET ${url} with If-Match: *`)
    t.equal(any.headers.etag, etag)
    t.equal((await app.inject({ method: 'GET', url, headers: { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' } })).statusCode, 200, 'a list has no Last-Modified, so If-Unmodified-Since is ignored')
  }
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects/999/tasks', headers: { 'if-match': '"other"' } }), 404, 'not-found')
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects?limit=0', headers: { 'if-match': '"other"' } }), 400, 'validation')
})

t.test('a list page\'s tag also covers its count and its next link: a page whose records did not change still revalidates to 200 when the collection grew', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  const addTask = async (name: string): Promise<void> => {
    t.equal((await post(app, '/v1/tasks', { name, projectId: project.id })).statusCode, 201)
  }
  await addTask('a')
  await addTask('b')
  const page = await app.inject({ method: 'GET', url: '/v1/tasks?limit=2' })
  const cursorPage = await app.inject({ method: 'GET', url: '/v1/tasks?limit=2&cursor=' })
  t.equal(page.headers['x-total-count'], '2')
  t.notMatch(cursorPage.headers.link as string, /rel="next"/, 'the cursor page is the last')
  t.equal((await app.inject({ method: 'GET', url: '/v1/tasks?limit=2', headers: { 'if-none-match': page.headers.etag as string } })).statusCode, 304, 'unchanged: 304')
  t.equal((await app.inject({ method: 'GET', url: '/v1/tasks?limit=2&cursor=', headers: { 'if-none-match': cursorPage.headers.etag as string } })).statusCode, 304)

  await addTask('c')
  const grown = await app.inject({ method: 'GET', url: '/v1/tasks?limit=2', headers: { 'if-none-match': page.headers.etag as string } })
  t.equal(grown.statusCode, 200, 'the same two records, but the count changed: 200')
  t.same(body(grown).map((task: Json) => task.name), ['a', 'b'])
  t.equal(grown.headers['x-total-count'], '3')
  t.match(grown.headers.link as string, /page=2>; rel="last"/)
  t.not(grown.headers.etag, page.headers.etag, 'under a new tag')
  const more = await app.inject({ method: 'GET', url: '/v1/tasks?limit=2&cursor=', headers: { 'if-none-match': cursorPage.headers.etag as string } })
  t.equal(more.statusCode, 200, 'the same two records, but a next page now: 200')
  t.match(more.headers.link as string, /rel="next"/)
  t.not(more.headers.etag, cursorPage.headers.etag)
  t.equal((await app.inject({ method: 'GET', url: '/v1/tasks?limit=2', headers: { 'if-none-match': grown.headers.etag as string } })).statusCode, 304, 'and the new tag revalidates')
})

t.test('If-Match on PUT / PATCH / DELETE: a stale tag is 412 and nothing changes', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/projects', { name: 'guarded', budget: 1 })
  const url = `/v1/projects/${body(created).id as number}`
  const first = created.headers.etag as string
  const ok = await app.inject({ method: 'PATCH', url, headers: { 'if-match': first }, payload: { budget: 2 } })
  t.equal(ok.statusCode, 200)
  const second = ok.headers.etag as string
  for (const [method, payload] of [['PATCH', { budget: 3 }], ['PUT', { name: 'guarded', budget: 3 }], ['DELETE', undefined]] as const) {
    const stale = await app.inject({ method, url, headers: { 'if-match': first }, ...(payload === undefined ? {} : { payload }) })
    assertProblem(t, stale, 412, 'precondition-failed')
  }
  t.equal(body(await app.inject({ method: 'GET', url })).budget, 2, 'nothing changed')
  assertProblem(t, await app.inject({ method: 'PATCH', url, headers: { 'if-match': `W/${second}` }, payload: { budget: 9 } }), 412, 'precondition-failed')
  t.equal((await app.inject({ method: 'PUT', url, headers: { 'if-match': `"junk", ${second}` }, payload: { name: 'guarded', budget: 4 } })).statusCode, 200, 'a list of tags')
  t.equal((await app.inject({ method: 'PATCH', url, headers: { 'if-match': '*' }, payload: { budget: 5 } })).statusCode, 200)
  assertProblem(t, await app.inject({ method: 'PATCH', url: '/v1/projects/999', headers: { 'if-match': '*' }, payload: { budget: 5 } }), 404)
  const current = (await app.inject({ method: 'GET', url })).headers.etag as string
  t.equal((await app.inject({ method: 'DELETE', url, headers: { 'if-match': current } })).statusCode, 204)
})

t.test('If-Unmodified-Since and If-None-Match on PUT / PATCH / DELETE, and If-Match on GET (RFC 9110 §13.2.2): 412 when they fail, and nothing changes', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/projects', { name: 'dated', budget: 1 })
  const url = `/v1/projects/${body(created).id as number}`
  const etag = created.headers.etag as string
  const lastModified = created.headers['last-modified'] as string
  const before = new Date(Date.parse(lastModified) - 1000).toUTCString()
  for (const [method, payload] of [['PATCH', { budget: 3 }], ['PUT', { name: 'dated', budget: 3 }], ['DELETE', undefined]] as const) {
    const request = { method, url, ...(payload === undefined ? {} : { payload }) }
    const old = assertProblem(t, await app.inject({ ...request, headers: { 'if-unmodified-since': before } }), 412, 'precondition-failed')
    t.match(old.detail, /If-Unmodified-Since/, `${method}: changed after the date`)
    assertProblem(t, await app.inject({ ...request, headers: { 'if-none-match': '*' } }), 412, 'precondition-failed')
    assertProblem(t, await app.inject({ ...request, headers: { 'if-none-match': `"other", W/${etag}` } }), 412, 'precondition-failed')
  }
  const unchanged = await app.inject({ method: 'GET', url })
  t.equal(unchanged.headers.etag, etag, 'none of them changed anything')
  t.equal(body(unchanged).budget, 1)

  t.equal((await app.inject({ method: 'PATCH', url, headers: { 'if-unmodified-since': lastModified }, payload: { budget: 2 } })).statusCode, 200, 'not modified after the date it was last modified')
  t.equal((await app.inject({ method: 'PATCH', url, headers: { 'if-unmodified-since': 'not a date' }, payload: { budget: 3 } })).statusCode, 200, 'an invalid date is ignored')
  const current = (await app.inject({ method: 'GET', url })).headers.etag as string
  t.equal((await app.inject({ method: 'PATCH', url, headers: { 'if-match': current, 'if-unmodified-since': before }, payload: { budget: 4 } })).statusCode, 200, 'If-Unmodified-Since is ignored with If-Match')
  t.equal((await app.inject({ method: 'PATCH', url, headers: { 'if-none-match': etag }, payload: { budget: 5 } })).statusCode, 200, 'If-None-Match naming an old state passes')
  assertProblem(t, await app.inject({ method: 'PUT', url: '/v1/projects/999999', headers: { 'if-none-match': '*' }, payload: { name: 'new' } }), 404, 'not-found')

  // A GET evaluates them too (§13.2.2 applies to every method): If-Match and If-Unmodified-Since fail with 412.
  const latest = await app.inject({ method: 'GET', url })
  assertProblem(t, await app.inject({ method: 'GET', url, headers: { 'if-match': etag } }), 412, 'precondition-failed')
  assertProblem(t, await app.inject({ method: 'GET', url, headers: { 'if-unmodified-since': before } }), 412, 'precondition-failed')
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-match': latest.headers.etag as string } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-match': '*' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-unmodified-since': latest.headers['last-modified'] as string } })).statusCode, 200)
})

t.test('a definition may require If-Match (428 without it)', async t => {
  const ledgers = defineResource({ collection: 'ledgers', fields: Type.Object({ name: Type.String() }), requireIfMatch: true })
  const app = await buildTestApp(t, { definitions: [ledgers] })
  const created = await post(app, '/v1/ledgers', { name: 'q1' })
  const url = `/v1/ledgers/${body(created).id as number}`
  assertProblem(t, await app.inject({ method: 'PATCH', url, payload: { name: 'q2' } }), 428, 'precondition-required')
  assertProblem(t, await app.inject({ method: 'DELETE', url }), 428)
  t.equal((await app.inject({ method: 'PATCH', url, headers: { 'if-match': created.headers.etag as string }, payload: { name: 'q2' } })).statusCode, 200)
})

t.test('Prefer: return=minimal', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/projects', { name: 'minimal' }, { prefer: 'return=minimal' })
  t.equal(created.statusCode, 201)
  t.equal(created.body, '')
  t.match(created.headers.location, /^\/v1\/projects\/\d+$/)
  t.equal(created.headers['preference-applied'], 'return=minimal')
  t.ok(created.headers.etag)
  const url = created.headers.location as string
  for (const [method, payload] of [['PATCH', { budget: 1 }], ['PUT', { name: 'minimal' }]] as const) {
    const response = await app.inject({ method, url, headers: { prefer: 'handling=strict; return=minimal' }, payload })
    t.equal(response.statusCode, 204, method)
    t.equal(response.body, '')
    t.equal(response.headers['preference-applied'], 'return=minimal')
    t.ok(response.headers.etag)
  }
  const full = await app.inject({ method: 'PATCH', url, headers: { prefer: 'return=representation' }, payload: { budget: 2 } })
  t.equal(full.statusCode, 200)
  t.equal(body(full).budget, 2)
})
