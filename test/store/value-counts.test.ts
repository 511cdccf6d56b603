/**
 * The X-Total-Count of a list filtered on a boolean or enum column comes from
 * counts per value the database keeps with triggers (src/store/value-counts.ts).
 * These tests hold both databases to the truth: creates, updates that change the value or not, deletes,
 * cascades, writes by another connection, a database from before the tally,
 * and every way a filter can test such a column (eq, ne, in, several at once,
 * a named filter, rows without a value).
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { defineResource, where } from '../../src/resources/define.js'
import { buildTestApp, createProject, ON_POSTGRES, post, testDatabaseUrl } from '../helper.js'
import { otherConnection, totalCount, type OtherConnection } from '../support/other-connection.js'
import { recordingStore } from '../support/recording-store.js'

/** Every filter on `status` and `active` the tests compare, with the SQL that counts its matches. */
const FILTERS: ReadonlyArray<readonly [string, string, string]> = [
  ['/v1/tasks?status=todo', 'tasks', "status = 'todo'"],
  ['/v1/tasks?status[ne]=done', 'tasks', "status <> 'done'"],
  ['/v1/tasks?filter=active', 'tasks', "status <> 'done'"],
  ['/v1/tasks?status[in]=todo,doing', 'tasks', "status in ('todo', 'doing')"],
  ['/v1/tasks?status[in]=done&status[ne]=todo', 'tasks', "status = 'done'"],
  ['/v1/tasks?status=doing', 'tasks', "status = 'doing'"],
  ['/v1/projects?active=true', 'projects', `active = ${ON_POSTGRES ? 'true' : '1'}`],
  ['/v1/projects?active[ne]=true', 'projects', `active = ${ON_POSTGRES ? 'false' : '0'}`]
]

async function assertCounts (t: Test, app: FastifyInstance, db: OtherConnection, when: string): Promise<void> {
  for (const [url, table, condition] of FILTERS) {
    t.equal(await totalCount(app, url), await db.count(table, condition), `${when}: ${url}`)
  }
}

async function createTask (app: FastifyInstance, projectId: number, status: string): Promise<number> {
  const response = await post(app, '/v1/tasks', { name: `a ${status} task`, projectId, status })
  if (response.statusCode !== 201) throw new Error(`could not create a task: ${response.body}`)
  return JSON.parse(response.body).id as number
}

t.test('filtered counts on boolean and enum columns follow every kind of write exactly', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  await assertCounts(t, app, db, 'empty')
  const kept = await createProject(app)
  const doomed = await createProject(app, { active: false })
  const ids: number[] = []
  for (const status of ['todo', 'todo', 'doing', 'done', 'done', 'done']) ids.push(await createTask(app, kept.id as number, status))
  for (const status of ['todo', 'doing', 'done']) await createTask(app, doomed.id as number, status)
  await assertCounts(t, app, db, 'after creates')
  t.equal(await totalCount(app, '/v1/tasks?filter=active'), 5)

  const patch = async (id: number, payload: Record<string, unknown>): Promise<number> => (await app.inject({ method: 'PATCH', url: `/v1/tasks/${id}`, payload })).statusCode
  t.equal(await patch(ids[0]!, { status: 'done' }), 200)
  await assertCounts(t, app, db, 'after a PATCH that changes the value')
  t.equal(await patch(ids[1]!, { priority: 1 }), 200)
  t.equal(await patch(ids[1]!, { status: 'todo' }), 200)
  await assertCounts(t, app, db, 'after PATCHes that leave it')
  t.equal((await app.inject({ method: 'PUT', url: `/v1/tasks/${ids[2]!}`, payload: { name: 'replaced', projectId: kept.id } })).statusCode, 200)
  await assertCounts(t, app, db, 'after a PUT that restores the default')
  t.equal(await patch(ids[3]!, { status: 'nonsense' }), 400)
  await assertCounts(t, app, db, 'after a refused PATCH')
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/tasks/${ids[4]!}` })).statusCode, 204)
  await assertCounts(t, app, db, 'after a delete')
  t.equal((await app.inject({ method: 'PATCH', url: `/v1/projects/${kept.id as number}`, payload: { active: false } })).statusCode, 200)
  await assertCounts(t, app, db, 'after a boolean changed')
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/projects/${doomed.id as number}` })).statusCode, 204)
  await assertCounts(t, app, db, 'after a cascade')
  t.equal(await totalCount(app, '/v1/tasks?filter=active'), 2)
})

t.test('values another connection writes, updates and deletes, bypassing the service, are counted', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const project = await createProject(app)
  await createTask(app, project.id as number, 'todo')
  const now = new Date().toISOString()
  const statuses = ['todo', 'doing', 'done']
  const values = Array.from({ length: 30 }, (_, i) => `(1, '${now}', '${now}', 'script ${i}', ${project.id as number}, '${statuses[i % 3]!}', 3)`).join(', ')
  await db.run(`insert into tasks (version, "createdAt", "updatedAt", name, "projectId", status, priority) values ${values}`)
  await assertCounts(t, app, db, 'a multi-row insert')
  await db.run("update tasks set status = 'done' where name like 'script 1%'")
  await assertCounts(t, app, db, 'a multi-row update')
  await db.run("update tasks set status = status, priority = 1 where name like 'script 2%'")
  await assertCounts(t, app, db, 'an update that sets the same value')
  await db.run("delete from tasks where status = 'doing'")
  await assertCounts(t, app, db, 'a multi-row delete')
})

t.test('concurrent writes that change values are each counted once', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const project = await createProject(app)
  const ids = await Promise.all(Array.from({ length: 30 }, async (_, i) => await createTask(app, project.id as number, i % 2 === 0 ? 'todo' : 'doing')))
  const results = await Promise.all([
    ...ids.slice(0, 10).map(async id => (await app.inject({ method: 'PATCH', url: `/v1/tasks/${id}`, payload: { status: 'done' } })).statusCode),
    ...ids.slice(10, 20).map(async id => (await app.inject({ method: 'DELETE', url: `/v1/tasks/${id}` })).statusCode),
    ...Array.from({ length: 10 }, async () => (await post(app, '/v1/tasks', { name: 'late', projectId: project.id, status: 'doing' })).statusCode)
  ])
  t.same(results, [...Array(10).fill(200), ...Array(10).fill(204), ...Array(10).fill(201)], 'every write succeeded')
  await assertCounts(t, app, db, 'after concurrent writes')
})

t.test('a count on one boolean or enum column reads no row of the collection on SQLite', async t => {
  const { store, sent, model } = await recordingStore(t)
  const tasks = model.get('tasks')
  const projects = model.get('projects')
  const project = await store.insert(projects, { name: 'p', active: true, tags: [] })
  for (const status of ['todo', 'doing', 'done', 'done']) await store.insert(tasks, { name: status, projectId: project.id, status, priority: 3 })
  const cases = [
    { conditions: [where('status', 'ne', 'done')], expected: 2 },
    { conditions: [where('status', 'in', ['todo', 'done'])], expected: 3 },
    { conditions: [where('status', 'ne', 'done'), where('status', 'ne', 'todo')], expected: 1 }
  ]
  for (const { conditions, expected } of cases) {
    sent.length = 0
    t.equal(await store.count(tasks, conditions), expected, JSON.stringify(conditions))
    const scans = sent.filter(query => /from "tasks"/.test(query.sql))
    t.same(scans.map(query => query.sql), [], 'the tallies are read, not the rows')
  }
  sent.length = 0
  t.equal(await store.count(tasks, [where('status', 'ne', 'done'), where('priority', 'eq', 3)]), 2)
  t.equal(sent.filter(query => /from "tasks"/.test(query.sql)).length, 1, 'conditions on two columns are counted')
})

t.test('rows without a value are counted by ne and by nothing else', async t => {
  const reviews = defineResource({
    collection: 'reviews',
    fields: Type.Object({
      name: Type.String(),
      verdict: Type.Optional(Type.Union([Type.Literal('accept'), Type.Literal('reject')])),
      urgent: Type.Optional(Type.Boolean())
    }),
    filterable: ['verdict', 'urgent'],
    filters: { undecided: [where('verdict', 'ne', 'accept'), where('verdict', 'ne', 'reject')] }
  })
  const app = await buildTestApp(t, { definitions: [reviews] })
  const db = await otherConnection(t)
  for (const [verdict, urgent] of [['accept', true], ['reject', false], [undefined, true], [undefined, undefined], ['accept', undefined]] as const) {
    t.equal((await post(app, '/v1/reviews', { name: 'r', ...(verdict === undefined ? {} : { verdict }), ...(urgent === undefined ? {} : { urgent }) })).statusCode, 201)
  }
  const check = async (when: string): Promise<void> => {
    for (const [query, condition] of [
      ['verdict=accept', "verdict = 'accept'"],
      ['verdict[ne]=accept', "verdict is null or verdict <> 'accept'"],
      ['verdict[in]=accept,reject', 'verdict is not null'],
      ['filter=undecided', 'verdict is null'],
      ['urgent=true', `urgent = ${ON_POSTGRES ? 'true' : '1'}`],
      ['urgent[ne]=true', `urgent is null or urgent = ${ON_POSTGRES ? 'false' : '0'}`]
    ]) {
      t.equal(await totalCount(app, `/v1/reviews?${query}`), await db.count('reviews', condition), `${when}: ${query}`)
    }
  }
  await check('after creates')
  t.equal(await totalCount(app, '/v1/reviews?verdict[ne]=accept'), 3, 'ne keeps the rows without a verdict')
  const first = 1
  t.equal((await app.inject({ method: 'PATCH', url: `/v1/reviews/${first}`, payload: { verdict: null, urgent: null } })).statusCode, 200)
  await check('after values were removed')
  t.equal((await app.inject({ method: 'PATCH', url: '/v1/reviews/4', payload: { verdict: 'reject', urgent: false } })).statusCode, 200)
  await check('after values were given')
})

t.test('a database whose rows predate the value counts is counted once, then kept', async t => {
  const url = await testDatabaseUrl(t)
  const first = await buildTestApp(t)
  const project = await createProject(first)
  for (const status of ['todo', 'done', 'done']) await createTask(first, project.id as number, status)
  await first.close()
  const db = await otherConnection(t)
  // What a database from before value counts looks like: no triggers, no tallies, no log entries.
  for (const [table, column] of [['tasks', 'status'], ['projects', 'active']]) {
    for (const event of ['inserts', 'deletes', 'updates']) await db.run(`drop trigger if exists ${table}_${column}_count_${event}${ON_POSTGRES ? ` on ${table}` : ''}`)
  }
  await db.run('drop table resourcery_value_counts')
  await db.run("delete from resourcery_migrations where change like 'count values of %'")
  await db.run(`insert into tasks (version, "createdAt", "updatedAt", name, "projectId", status, priority) values (1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'uncounted', ${project.id as number}, 'doing', 3)`)

  const second = await buildTestApp(t, { databaseUrl: url })
  await assertCounts(t, second, db, 'rows written before the tally')
  t.same((await second.store.migrate()).applied, [], 'the tallies are made once')
  await createTask(second, project.id as number, 'doing')
  await db.run("update tasks set status = 'todo' where name = 'uncounted'")
  await assertCounts(t, second, db, 'and writes after it')
})

t.test('the migration that meets a boolean or enum column says it counts its values', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  await db.run("delete from resourcery_migrations where change = 'count values of tasks.status'")
  const { applied } = await app.store.migrate()
  t.same(applied, ['count values of tasks.status'])
})
