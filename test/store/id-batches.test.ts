/**
 * Reads by id that arrive in one turn share one query where each query is a
 * round trip (PostgreSQL), and on SQLite one read of each record in the
 * turn's read snapshot: every request still gets its own record (or its
 * 404), a caller's narrowed view is never mixed into another's read, and a
 * change is seen by the next read, in the same turn too. The batching
 * itself, without a database: idBatches with a recording reader; the
 * snapshot's memo with a counter for its snapshots. The requests that share
 * a record share its answer too (record-answers.ts), each still answered as
 * it asked (GET, HEAD, 304).
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import type { FastifyReply } from 'fastify'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import { recordAnswer } from '../../src/resources/record-answers.js'
import { idBatches } from '../../src/store/id-batches.js'
import { snapshotMemo } from '../../src/store/snapshot-memo.js'
import { bearer, body, buildTestApp, createProject, post, type Json } from '../helper.js'
import { otherConnection } from '../support/other-connection.js'
import { recordingStore } from '../support/recording-store.js'

t.test('GETs that arrive together each get their own record, in one query a table on PostgreSQL', async t => {
  const { store, sent, dialect } = await recordingStore(t)
  const app = await buildTestApp(t, { store })
  const project = await createProject(app, { name: 'together' })
  const ids: number[] = []
  for (const name of ['a', 'b', 'c']) ids.push(body(await post(app, '/v1/tasks', { name, projectId: project.id })).id as number)
  const [a, b, c] = ids as [number, number, number]
  sent.length = 0

  const urls = [`/v1/tasks/${a}`, `/v1/tasks/${b}`, `/v1/tasks/${c}`, `/v1/tasks/${a}`, `/v1/tasks/${c + 1000}`, `/v1/projects/${project.id as number}`]
  const responses = await Promise.all(urls.map(async url => await app.inject({ method: 'GET', url })))
  t.same(responses.map(response => response.statusCode), [200, 200, 200, 200, 404, 200])
  t.same(responses.slice(0, 4).map(response => body(response).name), ['a', 'b', 'c', 'a'], 'each its own record; the one asked twice, twice')
  t.same(responses.slice(0, 4).map(response => body(response).id), [a, b, c, a])
  t.equal(body(responses[4]!).type, 'urn:resourcery:problem:not-found', 'the one that does not exist is a 404 among them')
  t.equal(body(responses[5]!).name, 'together', 'another table\'s record, read beside them')
  if (dialect.anyOf !== undefined) {
    const byTable = (table: string): number => sent.filter(query => query.sql.startsWith('select') && query.sql.includes(`from "${table}" where "id" = any(`)).length
    t.equal(byTable('tasks'), 1, 'PostgreSQL: one query for the five reads of tasks')
    t.equal(byTable('projects'), 1, 'and one for the project')
    t.same(sent.filter(query => query.sql.includes('"tasks"')).map(query => query.parameters[0]), [[a, b, c, c + 1000]], 'each id asked once')
  }
  if (dialect.currentSnapshot !== undefined) {
    // Read at once, in the turn's one read snapshot: the record asked twice was read once.
    t.same(sent.filter(query => query.sql.includes('from "tasks"')).map(query => query.parameters[0]), [a, b, c, c + 1000], 'SQLite: each id read once')
    t.equal(sent.filter(query => query.sql.includes('from "projects"')).length, 1)
  }
})

t.test('a record changed between two turns is read anew, whoever changed it', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const project = await createProject(app)
  const id = body(await post(app, '/v1/tasks', { name: 'first', projectId: project.id })).id as number
  const read = async (): Promise<Json> => body(await app.inject({ method: 'GET', url: `/v1/tasks/${id}` }))
  t.equal((await read()).name, 'first')
  t.equal((await app.inject({ method: 'PATCH', url: `/v1/tasks/${id}`, payload: { name: 'second' } })).statusCode, 200)
  t.equal((await read()).name, 'second', 'a change through the service')
  await db.run(`update tasks set name = 'third', version = version + 1 where id = ${id}`)
  t.equal((await read()).name, 'third', 'a change by another connection')
})

t.test('a record read, then written, is read anew once the write is acknowledged', async t => {
  const { store, model, sent } = await recordingStore(t)
  const projects = model.get('projects')!
  const project = await store.insert(projects, { name: 'before', active: true, tags: [], description: undefined, budget: undefined })
  await nextTurn()
  sent.length = 0
  const together = await Promise.all([store.get(projects, project.id), store.get(projects, project.id)])
  t.same(together.map(record => record?.values.name), ['before', 'before'])
  t.equal(sent.filter(query => query.sql.includes('from "projects"')).length, 1, 'read together, one read answers both')
  await store.update(projects, project.id, current => ({ ...current.values, name: 'after' }))
  t.equal((await store.get(projects, project.id))?.values.name, 'after', 'the read after the acknowledged write sees it')
})

t.test('GETs, HEADs and revalidations of one record arriving together share its answer, each as its request asks', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app, { name: 'shared answer', budget: 5 })
  const url = `/v1/projects/${project.id as number}`
  const etag = (await app.inject({ method: 'GET', url })).headers.etag as string
  const [got, head, revalidated, stale, again] = await Promise.all([
    app.inject({ method: 'GET', url }),
    app.inject({ method: 'HEAD', url }),
    app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } }),
    app.inject({ method: 'GET', url, headers: { 'if-none-match': '"other"' } }),
    app.inject({ method: 'GET', url })
  ])
  t.same([got, head, revalidated, stale, again].map(answer => answer.statusCode), [200, 200, 304, 200, 200])
  t.same(body(got), project, 'the record as created')
  t.equal(again.body, got.body)
  t.equal(stale.body, got.body)
  t.equal(head.body, '', 'HEAD: no body')
  t.equal(revalidated.body, '', '304: no body')
  for (const answer of [got, head, revalidated, stale, again]) {
    t.equal(answer.headers.etag, etag)
    t.equal(answer.headers['last-modified'], got.headers['last-modified'])
    t.equal(answer.headers['cache-control'], 'private, no-cache')
  }
  for (const answer of [got, head, stale, again]) {
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(answer.headers['content-length'], String(Buffer.byteLength(got.body)))
  }
  const edited = await app.inject({ method: 'PATCH', url, payload: { budget: 6 } })
  const after = await app.inject({ method: 'GET', url })
  t.equal(after.headers.etag, edited.headers.etag, 'after a write, the new version\'s answer')
  t.equal(body(after).budget, 6)
})

t.test('recordAnswer: one answer a record object, its body serialised once, by the route\'s serializer', async t => {
  const projects = buildModel(resources).get('projects')!
  const record = { id: 7, version: 3, createdAt: '2026-01-02T03:04:05.006Z', updatedAt: '2026-02-03T04:05:06.007Z', values: { name: 'p', active: true, tags: [] } }
  const serialised: unknown[][] = []
  const reply = { serializeInput: (...args: unknown[]) => { serialised.push(args); return 'the body' } } as unknown as FastifyReply
  const answer = recordAnswer(projects, 'epoch', record)
  t.equal(recordAnswer(projects, 'epoch', record), answer, 'the same record: the same answer')
  t.same(answer.tag, { weak: false, opaque: 'epoch.7.3' })
  t.equal(answer.etag, '"epoch.7.3"')
  t.equal(answer.lastModified, 'Tue, 03 Feb 2026 04:05:06 GMT')
  t.equal(serialised.length, 0, 'no body is made until one is sent')
  t.equal(answer.body(reply), 'the body')
  t.equal(answer.body(reply), 'the body')
  t.equal(serialised.length, 1, 'serialised once')
  t.same(serialised[0], [{ id: 7, name: 'p', active: true, tags: [], links: { self: '/v1/projects/7', tasks: '/v1/projects/7/tasks' }, createdAt: record.createdAt, updatedAt: record.updatedAt }, '200', 'application/json'])
  t.not(recordAnswer(projects, 'epoch', { ...record, version: 4 }), answer, 'another record object (another read): an answer of its own')
})

t.test('a caller who sees only their own records is not answered from another caller\'s read', async t => {
  const app = await buildTestApp(t)
  const alice = bearer({ sub: 'alice', scope: 'notes:read notes:write' })
  const bob = bearer({ sub: 'bob', scope: 'notes:read notes:write' })
  const note = body(await post(app, '/v1/notes', { name: 'alice\'s' }, { authorization: alice })).id as number
  const get = async (authorization: string) => await app.inject({ method: 'GET', url: `/v1/notes/${note}`, headers: { authorization } })
  const [asAlice, asBob, asAdmin] = await Promise.all([get(alice), get(bob), app.inject({ method: 'GET', url: `/v1/notes/${note}` })])
  t.equal(asAlice.statusCode, 200)
  t.equal(body(asAlice).name, 'alice\'s')
  t.equal(asBob.statusCode, 404, 'bob, in the same turn, does not see it')
  t.equal(asAdmin.statusCode, 200, 'an admin does')
})

t.test('idBatches: the ids of a turn go in one read a table, each distinct once, and at most 500 to a read', async t => {
  const reads: Array<{ table: string, ids: readonly number[] }> = []
  const batches = idBatches<string, string>(async (table, ids) => {
    reads.push({ table, ids })
    return new Map(ids.filter(id => id % 2 === 1).map(id => [id, `${table} ${id}`]))
  })
  const found = await Promise.all([batches.load('tasks', 1), batches.load('tasks', 2), batches.load('tasks', 1), batches.load('projects', 3)])
  t.same(found, ['tasks 1', undefined, 'tasks 1', 'projects 3'], 'each its own answer; an id not found is undefined')
  t.same(reads, [{ table: 'tasks', ids: [1, 2] }, { table: 'projects', ids: [3] }])

  reads.length = 0
  const many = await Promise.all(Array.from({ length: 501 }, async (_, i) => await batches.load('tasks', i + 1)))
  t.equal(many[500], 'tasks 501')
  t.same(reads.map(read => read.ids.length), [500, 1], 'a full read goes at once, the rest at the end of the turn')

  reads.length = 0
  await batches.load('tasks', 5)
  await batches.load('tasks', 7)
  t.same(reads.map(read => read.ids), [[5], [7]], 'reads of different turns are not held for each other')
})

t.test('idBatches: a read that fails fails every request that waited for it, and the next turn reads again', async t => {
  let failing = true
  const batches = idBatches<string, number>(async (_table, ids) => {
    if (failing) throw new Error('the database is away')
    return new Map(ids.map(id => [id, id * 10]))
  })
  const results = await Promise.allSettled([batches.load('tasks', 1), batches.load('tasks', 2)])
  t.same(results.map(result => result.status), ['rejected', 'rejected'])
  t.same(results.map(result => result.status === 'rejected' ? (result.reason as Error).message : ''), ['the database is away', 'the database is away'])
  failing = false
  t.equal(await batches.load('tasks', 2), 20)
})

t.test('snapshotMemo: one answer a key within a snapshot, none kept into the next, and a failure not kept', async t => {
  let snapshot = 1
  let computed = 0
  const memo = snapshotMemo<string>(() => snapshot)
  const answer = (key: string): string => memo(key, () => `${key} ${++computed}`)
  t.same([answer('a'), answer('b'), answer('a')], ['a 1', 'b 2', 'a 1'], 'a key asked twice in a snapshot is computed once')
  snapshot = 2
  t.equal(answer('a'), 'a 3', 'a new snapshot computes again')
  t.throws(() => memo('c', () => { throw new Error('the database is away') }), /away/)
  t.equal(answer('c'), 'c 4', 'a failure is not kept')
})
