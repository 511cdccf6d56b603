/**
 * A whole collection's X-Total-Count comes from a tally the database keeps
 * with triggers (src/store/row-counts.ts). These tests hold it to the truth:
 * after writes through the API, cascades, concurrent writers and writes by
 * another connection that bypasses the service, and on a database that had
 * rows before the tally existed. A filtered count (on other than one boolean or
 * enum column, which value-counts.test.ts covers) is still counted, once per
 * change of the data however many requests want it. Runs on SQLite and
 * PostgreSQL.
 */
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { where } from '../../src/resources/define.js'
import { ADMIN, body, buildTestApp, createProject, ON_POSTGRES, post, testDatabaseUrl } from '../helper.js'
import { otherConnection, totalCount } from '../support/other-connection.js'
import { recordingStore } from '../support/recording-store.js'

async function createTask (app: FastifyInstance, projectId: number, name = 'a task'): Promise<number> {
  const response = await post(app, '/v1/tasks', { name, projectId })
  if (response.statusCode !== 201) throw new Error(`could not create a task: ${response.body}`)
  return body(response).id as number
}

t.test('X-Total-Count of a whole collection follows creates, deletes and cascades exactly', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  t.equal(await totalCount(app, '/v1/tasks'), 0, 'an empty collection counts 0')
  const kept = await createProject(app)
  const doomed = await createProject(app)
  const ids = []
  for (let i = 0; i < 5; i++) ids.push(await createTask(app, kept.id as number))
  for (let i = 0; i < 4; i++) await createTask(app, doomed.id as number)
  t.equal(await totalCount(app, '/v1/tasks'), 9, 'every create counts')
  t.equal(await totalCount(app, '/v1/projects'), 2, 'each collection has its own count')

  t.equal((await app.inject({ method: 'DELETE', url: `/v1/tasks/${ids[0]!}` })).statusCode, 204)
  t.equal(await totalCount(app, '/v1/tasks'), 8, 'a delete counts')
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/tasks/${ids[0]!}` })).statusCode, 404)
  t.equal(await totalCount(app, '/v1/tasks'), 8, 'deleting what is gone changes nothing')
  t.equal((await post(app, '/v1/tasks', { name: 'orphan', projectId: 99999 })).statusCode, 400)
  t.equal(await totalCount(app, '/v1/tasks'), 8, 'a refused create changes nothing')
  t.equal((await app.inject({ method: 'PATCH', url: `/v1/tasks/${ids[1]!}`, payload: { status: 'done' } })).statusCode, 200)
  t.equal(await totalCount(app, '/v1/tasks'), 8, 'an update changes nothing')

  t.equal((await app.inject({ method: 'DELETE', url: `/v1/projects/${doomed.id as number}` })).statusCode, 204)
  t.equal(await totalCount(app, '/v1/tasks'), 4, 'the tasks a project took with it by cascade are uncounted')
  t.equal(await totalCount(app, '/v1/projects'), 1)
  t.equal(await totalCount(app, '/v1/tasks'), await db.count('tasks'), 'the count agrees with the table')
  t.equal(await totalCount(app, `/v1/projects/${kept.id as number}/tasks`), 4, 'a nested list counts its own')
  t.equal(await totalCount(app, '/v1/tasks?status=done'), 1, 'a filtered list counts its matches')
})

t.test('rows another connection writes, bypassing the service, are counted', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const project = await createProject(app)
  await createTask(app, project.id as number)
  t.equal(await totalCount(app, '/v1/tasks'), 1)
  const now = new Date().toISOString()
  const values = Array.from({ length: 50 }, (_, i) => `(1, '${now}', '${now}', 'script ${i}', ${project.id as number}, 'todo', 3)`).join(', ')
  await db.run(`insert into tasks (version, "createdAt", "updatedAt", name, "projectId", status, priority) values ${values}`)
  t.equal(await totalCount(app, '/v1/tasks'), 51, 'a multi-row insert by a script')
  await db.run("delete from tasks where name like 'script 1%'")
  t.equal(await totalCount(app, '/v1/tasks'), 40, 'a multi-row delete by a script')
  t.equal(await totalCount(app, '/v1/tasks'), await db.count('tasks'))
})

t.test('concurrent creates and deletes are each counted once', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const project = await createProject(app)
  const first = await Promise.all(Array.from({ length: 40 }, async (_, i) => await createTask(app, project.id as number, `first ${i}`)))
  // Deletes of existing tasks race new creates: separate transactions, on PostgreSQL on separate connections.
  const statuses = await Promise.all([
    ...first.slice(0, 25).map(async id => (await app.inject({ method: 'DELETE', url: `/v1/tasks/${id}` })).statusCode),
    ...Array.from({ length: 40 }, async (_, i) => (await post(app, '/v1/tasks', { name: `second ${i}`, projectId: project.id })).statusCode)
  ])
  t.same(statuses, [...Array(25).fill(204), ...Array(40).fill(201)], 'every write succeeded')
  t.equal(await totalCount(app, '/v1/tasks'), 55)
  t.equal(await db.count('tasks'), 55)
})

t.test('concurrent cascades and creates across collections neither deadlock nor miscount', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const doomed = await Promise.all(Array.from({ length: 8 }, async () => await createProject(app)))
  const kept = await createProject(app)
  for (const project of doomed) for (let i = 0; i < 5; i++) await createTask(app, project.id as number)
  // Each cascade updates the tasks tally and then the projects tally in one transaction, while
  // creates of tasks and projects take their own tally rows: any two could meet on a row.
  const statuses = await Promise.all([
    ...doomed.map(async project => (await app.inject({ method: 'DELETE', url: `/v1/projects/${project.id as number}` })).statusCode),
    ...Array.from({ length: 20 }, async (_, i) => (await post(app, '/v1/tasks', { name: `new ${i}`, projectId: kept.id })).statusCode),
    ...Array.from({ length: 10 }, async (_, i) => (await post(app, '/v1/projects', { name: `new project ${i}` })).statusCode)
  ])
  t.same(statuses, [...Array(8).fill(204), ...Array(30).fill(201)], 'every write succeeded')
  t.equal(await totalCount(app, '/v1/tasks'), 20)
  t.equal(await db.count('tasks'), 20)
  t.equal(await totalCount(app, '/v1/projects'), 11)
  t.equal(await db.count('projects'), 11)
})

t.test('a database whose rows predate the tally is counted once at start, then kept', async t => {
  const url = await testDatabaseUrl(t)
  const first = await buildTestApp(t)
  const project = await createProject(first)
  for (let i = 0; i < 3; i++) await createTask(first, project.id as number)
  await first.close()
  // What a database from before row counts looks like: no triggers, no tally.
  const db = await otherConnection(t)
  for (const table of ['tasks', 'projects']) {
    for (const event of ['inserts', 'deletes']) await db.run(`drop trigger if exists ${table}_count_${event}${ON_POSTGRES ? ` on ${table}` : ''}`)
  }
  await db.run('delete from resourcery_row_counts')
  await db.run(`insert into tasks (version, "createdAt", "updatedAt", name, "projectId", status, priority) values (1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'uncounted', ${project.id as number}, 'todo', 3)`)

  const second = await buildTestApp(t, { databaseUrl: url })
  t.equal(await totalCount(second, '/v1/tasks'), 4, 'rows written before the tally are in the count')
  t.equal(await totalCount(second, '/v1/projects'), 1)
  t.same((await second.store.migrate()).applied, [], 'the tally is made once')
  await createTask(second, project.id as number)
  await db.run("delete from tasks where name = 'uncounted'")
  t.equal(await totalCount(second, '/v1/tasks'), 4, 'and writes after it are counted')
  t.equal(await db.count('tasks'), 4)
})

t.test('the tally is made in the migration that creates or meets a collection, and recorded', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  await db.run('delete from resourcery_row_counts')
  const { applied } = await app.store.migrate()
  t.same(applied.filter(change => change.startsWith('count rows')).sort(), ['count rows of labels', 'count rows of notes', 'count rows of projects', 'count rows of tasks'])
  const list = await app.inject({ method: 'GET', url: '/v1/tasks', headers: { authorization: ADMIN } })
  t.equal(list.headers['x-total-count'], '0')
})

t.test('requests that want the same filtered count at once share one count, and a write makes the next one count again', async t => {
  const { store, sent, stamps, model } = await recordingStore(t)
  const projects = model.get('projects')
  // Budget is not a tallied column (value-counts.ts): its matches are counted.
  const funded = [where('budget', 'gt', 0)]
  const counting = (): number => sent.filter(query => /count\(\*\)/i.test(query.sql)).length
  // One count per stamp. Here only this test writes, but on PostgreSQL a commit by a test file running
  // beside it also moves the stamp, and the count is then rightly made again.
  const distinctStamps = async (): Promise<number> => new Set(await Promise.all(stamps)).size
  await store.insert(projects, { name: 'one', budget: 10, active: true, tags: [] })
  sent.length = 0
  stamps.length = 0
  t.same(await Promise.all(Array.from({ length: 20 }, async () => await store.count(projects, funded))), Array(20).fill(1))
  t.equal(counting(), 1, '20 concurrent requests, one count')
  t.equal(await store.count(projects, funded), 1)
  t.equal(counting(), await distinctStamps(), 'and it is remembered while nothing changes')
  const before = counting()
  await store.insert(projects, { name: 'two', budget: 20, active: true, tags: [] })
  t.same(await Promise.all(Array.from({ length: 20 }, async () => await store.count(projects, funded))), Array(20).fill(2), 'a write is seen')
  t.equal(counting(), before + 1, 'by one new count')
  t.equal(counting(), await distinctStamps())
})
