import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { ADMIN, assertProblem, body, listen, buildTestApp, createProject, pointers, post } from '../helper.js'

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

t.test('POST creates: 201, Location, defaults, links and timestamps', async t => {
  const app = await buildTestApp(t)
  const response = await post(app, '/v1/projects', { name: 'Road repairs', budget: 1200 })
  t.equal(response.statusCode, 201)
  t.match(response.headers['content-type'], /^application\/json/)
  const project = body(response)
  t.equal(response.headers.location, `/v1/projects/${project.id}`)
  t.type(project.id, 'number')
  t.ok(Number.isInteger(project.id) && project.id > 0)
  t.same(project, {
    id: project.id,
    name: 'Road repairs',
    budget: 1200,
    active: true,
    tags: [],
    links: { self: `/v1/projects/${project.id}`, tasks: `/v1/projects/${project.id}/tasks` },
    createdAt: project.createdAt,
    updatedAt: project.updatedAt
  })
  t.notOk('description' in project, 'absent optional field is absent, not null')
  t.match(project.createdAt, RFC3339_MS)
  t.equal(project.updatedAt, project.createdAt)
})

t.test('GET by id and HEAD', async t => {
  const app = await buildTestApp(t)
  const created = await createProject(app, { name: 'Bridge', description: 'Steel', tags: ['a', 'b'] })
  const response = await app.inject({ method: 'GET', url: `/v1/projects/${created.id}` })
  t.equal(response.statusCode, 200)
  t.same(body(response), created)

  const head = await app.inject({ method: 'HEAD', url: `/v1/projects/${created.id}` })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.match(head.headers['content-type'], /^application\/json/)

  const missing = await app.inject({ method: 'GET', url: '/v1/projects/999999' })
  assertProblem(t, missing, 404, 'not-found')
})

t.test('GET list returns a JSON array of representations', async t => {
  const app = await buildTestApp(t)
  const a = await createProject(app, { name: 'A' })
  const b = await createProject(app, { name: 'B' })
  const response = await app.inject({ method: 'GET', url: '/v1/projects' })
  t.equal(response.statusCode, 200)
  t.same(body(response), [a, b])
  const slash = await app.inject({ method: 'GET', url: '/v1/projects/' })
  t.equal(slash.statusCode, 200, 'a trailing slash is ignored')
  t.same(body(slash), [a, b])
  const item = await app.inject({ method: 'GET', url: `/v1/projects/${a.id}/` })
  t.same(body(item), a)
})

t.test('PUT replaces every writable field', async t => {
  const app = await buildTestApp(t)
  const created = await createProject(app, { name: 'Old', description: 'to be removed', active: false, budget: 5, tags: ['x'] })

  const response = await app.inject({ method: 'PUT', url: `/v1/projects/${created.id}`, payload: { name: 'New' } })
  t.equal(response.statusCode, 200)
  const replaced = body(response)
  t.equal(replaced.name, 'New')
  t.notOk('description' in replaced, 'missing optional field is removed')
  t.notOk('budget' in replaced, 'missing optional field is removed')
  t.equal(replaced.active, true, 'missing defaulted field gets its default')
  t.same(replaced.tags, [], 'missing defaulted array gets its default')
  t.equal(replaced.createdAt, created.createdAt)
  t.ok(replaced.updatedAt >= created.updatedAt)
  t.same(body(await app.inject({ method: 'GET', url: `/v1/projects/${created.id}` })), replaced, 'the replacement was stored')

  const noName = await app.inject({ method: 'PUT', url: `/v1/projects/${created.id}`, payload: { description: 'x' } })
  t.same(pointers(assertProblem(t, noName, 400, 'validation')), ['/name'], 'missing required field is 400')

  const upsert = await app.inject({ method: 'PUT', url: '/v1/projects/4242', payload: { name: 'Nope' } })
  assertProblem(t, upsert, 404)
  const list = body(await app.inject({ method: 'GET', url: '/v1/projects' }))
  t.equal(list.length, 1, 'PUT does not create')
})

t.test('PUT accepts a GET body echoed back, refuses changed read-only fields', async t => {
  const app = await buildTestApp(t)
  const created = await createProject(app, { name: 'Echo', budget: 3 })
  const edited = { ...created, budget: 4 }
  const response = await app.inject({ method: 'PUT', url: `/v1/projects/${created.id}`, payload: edited })
  t.equal(response.statusCode, 200)
  t.equal(body(response).budget, 4)

  const current = body(response)
  const tampered = { ...current, id: current.id + 1, createdAt: '2000-01-01T00:00:00.000Z', links: { self: '/v1/projects/1' } }
  const refused = await app.inject({ method: 'PUT', url: `/v1/projects/${created.id}`, payload: tampered })
  const problem = assertProblem(t, refused, 400, 'validation')
  t.same(pointers(problem), ['/createdAt', '/id', '/links'])
  t.equal(body(await app.inject({ method: 'GET', url: `/v1/projects/${created.id}` })).budget, 4, 'nothing changed')
})

t.test('a PUT or PATCH body with schema errors and changed read-only values names all of them', async t => {
  const app = await buildTestApp(t)
  const created = await createProject(app, { name: 'All of them', budget: 3 })
  const url = `/v1/projects/${created.id}`
  const tampered = { ...created, id: created.id + 1, createdAt: '2000-01-01T00:00:00.000Z', budget: 'lots', colour: 'red' }

  const put = assertProblem(t, await app.inject({ method: 'PUT', url, payload: tampered }), 400, 'validation')
  t.same(pointers(put), ['/budget', '/colour', '/createdAt', '/id'])
  t.equal(put.detail, '4 values in the body are invalid')
  t.same(put.errors.find((issue: { pointer: string }) => issue.pointer === '/id'),
    { in: 'body', pointer: '/id', detail: 'is read-only; send it back unchanged or leave it out' })

  const patch = assertProblem(t, await app.inject({ method: 'PATCH', url, payload: { id: 'seven', updatedAt: '2001-01-01T00:00:00.000Z', name: 5 } }), 400, 'validation')
  t.same(pointers(patch), ['/id', '/name', '/updatedAt'], 'one issue per value: a mistyped id is named once, by its type')
  t.same(patch.errors.find((issue: { pointer: string }) => issue.pointer === '/id'), { in: 'body', pointer: '/id', detail: 'must be integer, not string' })

  const echoed = assertProblem(t, await app.inject({ method: 'PATCH', url, payload: { id: created.id, createdAt: created.createdAt, budget: 'lots' } }), 400)
  t.same(pointers(echoed), ['/budget'], 'read-only values echoed unchanged are not issues')

  const missing = assertProblem(t, await app.inject({ method: 'PUT', url: '/v1/projects/777', payload: tampered }), 400, 'validation')
  t.same(pointers(missing), ['/budget', '/colour'], 'with no record to compare, the schema issues alone')
  assertProblem(t, await app.inject({ method: 'PATCH', url: '/v1/projects/abc', payload: { id: 1, budget: 'x' } }), 400)
  t.equal(body(await app.inject({ method: 'GET', url })).budget, 3, 'nothing changed')
})

t.test('PATCH applies JSON Merge Patch', async t => {
  const app = await buildTestApp(t)
  const created = await createProject(app, { name: 'Patchy', description: 'desc', active: false, budget: 10, tags: ['a'] })
  const url = `/v1/projects/${created.id}`

  const merge = await app.inject({ method: 'PATCH', url, payload: { budget: 20 }, headers: { 'content-type': 'application/merge-patch+json' } })
  t.equal(merge.statusCode, 200)
  t.same({ ...body(merge), updatedAt: created.updatedAt }, { ...created, budget: 20 }, 'only budget changed')

  const nulls = await app.inject({ method: 'PATCH', url, payload: { description: null, active: null, tags: null } })
  t.equal(nulls.statusCode, 200, 'application/json is accepted too')
  const patched = body(nulls)
  t.notOk('description' in patched, 'null removes an optional field (absent, not null)')
  t.equal(patched.active, true, 'null restores the default')
  t.same(patched.tags, [], 'null restores an array default')
  t.equal(patched.budget, 20)

  const required = await app.inject({ method: 'PATCH', url, payload: { name: null } })
  t.same(pointers(assertProblem(t, required, 400, 'validation')), ['/name'], 'null on a required field is 400')

  const echo = await app.inject({ method: 'PATCH', url, payload: { id: created.id, createdAt: created.createdAt, name: 'Renamed' } })
  t.equal(echo.statusCode, 200, 'unchanged read-only fields may be echoed')
  t.equal(body(echo).name, 'Renamed')

  const changed = await app.inject({ method: 'PATCH', url, payload: { updatedAt: '2001-01-01T00:00:00.000Z' } })
  t.same(pointers(assertProblem(t, changed, 400)), ['/updatedAt'])

  assertProblem(t, await app.inject({ method: 'PATCH', url: '/v1/projects/777', payload: { name: 'x' } }), 404)
})

t.test('DELETE answers 204 with no body, then 404', async t => {
  const app = await buildTestApp(t)
  const created = await createProject(app)
  const url = `/v1/projects/${created.id}`
  const response = await app.inject({ method: 'DELETE', url })
  t.equal(response.statusCode, 204)
  t.equal(response.body, '')
  assertProblem(t, await app.inject({ method: 'DELETE', url }), 404, 'not-found')
  assertProblem(t, await app.inject({ method: 'GET', url }), 404, 'not-found')
})

t.test('a unique field clash is 409, on create and on update', async t => {
  const app = await buildTestApp(t)
  await createProject(app, { name: 'Taken' })
  const other = await createProject(app, { name: 'Free' })
  const clash = assertProblem(t, await post(app, '/v1/projects', { name: 'Taken' }), 409, 'unique-violation')
  t.match(clash.detail, /name/)
  assertProblem(t, await app.inject({ method: 'PATCH', url: `/v1/projects/${other.id}`, payload: { name: 'Taken' } }), 409)
  t.equal(body(await app.inject({ method: 'GET', url: `/v1/projects/${other.id}` })).name, 'Free')
})

t.test('a unique object field clashes with an equal object whatever the order of its members', async t => {
  const seats = defineResource({
    collection: 'seats',
    fields: Type.Object({ name: Type.String(), spot: Type.Object({ row: Type.String(), seat: Type.Integer(), hall: Type.Optional(Type.Object({ floor: Type.Integer(), wing: Type.String() })) }) }),
    unique: ['spot']
  })
  const app = await buildTestApp(t, { definitions: [seats] })
  t.equal((await post(app, '/v1/seats', { name: 'a', spot: { row: 'F', seat: 12, hall: { wing: 'east', floor: 1 } } })).statusCode, 201)
  const clash = assertProblem(t, await post(app, '/v1/seats', { name: 'b', spot: { hall: { floor: 1, wing: 'east' }, seat: 12, row: 'F' } }), 409, 'unique-violation')
  t.match(clash.detail, /spot/)
  const other = await post(app, '/v1/seats', { name: 'c', spot: { row: 'F', seat: 13 } })
  t.equal(other.statusCode, 201, 'another seat is free')
  t.same(body(other).spot, { row: 'F', seat: 13 }, 'and reads back equal')
})

t.test('the notes resource has a read-only owner a client cannot set, stamped on create', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/notes', { name: 'Groceries', body: 'milk' })
  t.equal(created.statusCode, 201)
  t.equal(body(created).owner, 'test-admin', 'create stamps the caller\'s subject')
  const forged = await post(app, '/v1/notes', { name: 'x', owner: 'mallory' })
  const problem = assertProblem(t, forged, 400)
  t.same(problem.errors, [{ in: 'body', pointer: '/owner', detail: 'is read-only and cannot be set' }])
})

t.test('through a real listening server', async t => {
  const app = await buildTestApp(t)
  const base = await listen(app)
  const authorization = ADMIN

  const created = await fetch(`${base}/v1/projects`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Live' }) })
  t.equal(created.status, 201)
  const project = await created.json() as { id: number }
  t.equal(created.headers.get('location'), `/v1/projects/${project.id}`)

  const patched = await fetch(`${base}/v1/projects/${project.id}`, { method: 'PATCH', headers: { authorization, 'content-type': 'application/merge-patch+json' }, body: '{"budget": 7.5}' })
  t.equal(patched.status, 200)
  t.equal((await patched.json() as { budget: number }).budget, 7.5)

  const bad = await fetch(`${base}/v1/projects/abc`, { headers: { authorization } })
  t.equal(bad.status, 400)
  t.match(bad.headers.get('content-type'), /^application\/problem\+json/)

  const removed = await fetch(`${base}/v1/projects/${project.id}`, { method: 'DELETE', headers: { authorization } })
  t.equal(removed.status, 204)
  t.equal(await removed.text(), '')
})
