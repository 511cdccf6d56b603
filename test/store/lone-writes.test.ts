/**
 * Writes that commit alone (event-writes.ts): on PostgreSQL, while no
 * webhook subscription is active, a create, edit or delete is one write
 * statement that commits by itself, carrying the condition that no
 * subscription is active; else it runs in a transaction with its event, its
 * record read before that transaction, with the turn's other reads. Runs
 * on SQLite too (every write in a group-committed transaction), where the
 * answers and the events are checked and no statement is tried alone.
 */
import t from 'tap'
import { body, buildTestApp, createProject, post } from '../helper.js'
import { otherConnection } from '../support/other-connection.js'
import { recordingStore } from '../support/recording-store.js'
import { addActiveSubscription } from '../support/subscriptions.js'
import { EVENTS_TABLE, WEBHOOKS_TABLE } from '../../src/store/webhook-tables.js'

/** The statements sent alone: they carry the condition that no subscription is active. */
const alone = (sql: string): boolean => sql.includes(`not exists (select 1 from "${WEBHOOKS_TABLE}"`)

t.test('without a subscription, a create, an edit and a delete each commit as one statement on PostgreSQL', async t => {
  const { store, sent, dialect } = await recordingStore(t)
  const app = await buildTestApp(t, { store })
  const other = await otherConnection(t)
  const project = await createProject(app, { name: 'alone' })
  sent.length = 0

  const created = await post(app, '/v1/tasks', { name: 'first', projectId: project.id })
  t.equal(created.statusCode, 201)
  const id = body(created).id as number
  t.equal(await other.count('tasks', `id = ${id} and name = 'first'`), 1, 'committed: another connection reads it')
  const patched = await app.inject({ method: 'PATCH', url: `/v1/tasks/${id}`, headers: { 'if-match': created.headers.etag! }, payload: { name: 'second' } })
  t.equal(patched.statusCode, 200)
  t.equal(body(patched).name, 'second')
  t.equal(await other.count('tasks', `id = ${id} and name = 'second' and version = 2`), 1)
  const stale = await app.inject({ method: 'PATCH', url: `/v1/tasks/${id}`, headers: { 'if-match': created.headers.etag! }, payload: { name: 'third' } })
  t.equal(stale.statusCode, 412, 'an If-Match that no longer holds is still a 412')
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/tasks/${id}` })).statusCode, 204)
  t.equal(await other.count('tasks', `id = ${id}`), 0)
  t.equal(await other.count(EVENTS_TABLE), 0, 'no event: no subscription wanted one')

  const sentAlone = sent.filter(query => alone(query.sql)).map(query => query.sql.split(' ').slice(0, 3).join(' '))
  if (dialect.writesOneAtATime) {
    t.same(sentAlone, [], 'SQLite: every write in the writer\'s transaction')
    return
  }
  t.same(sentAlone, ['insert into "tasks"', 'update "tasks" set', 'delete from "tasks"'], 'PostgreSQL: each write one statement sent alone')
  t.ok(sent.some(query => query.sql.includes('from "tasks" where "id" = any(') && (query.parameters[0] as unknown[]).includes(id)), 'the edit\'s read joined its turn\'s reads by id')
})

t.test('a subscription another process adds is honoured by the next write; while it stays, writes go straight to a transaction', async t => {
  const { store, sent, dialect, model } = await recordingStore(t)
  const other = await otherConnection(t)
  const projects = model.get('projects')
  const values = (name: string): Record<string, unknown> => ({ name, description: undefined, active: true, budget: undefined, tags: [] })
  const rename = async (name: string): Promise<void> => { await store.update(projects, project.id, current => ({ ...current.values, name })) }
  const events = async (type?: string): Promise<number> => await other.count(EVENTS_TABLE, type === undefined ? undefined : `type = '${type}'`)
  const triedAlone = (): number => sent.filter(query => alone(query.sql)).length
  const onPostgres = !dialect.writesOneAtATime

  const project = await store.insert(projects, values('before'))
  t.equal(await events(), 0, 'no subscription, no event')

  await addActiveSubscription(other)
  sent.length = 0
  await rename('heard')
  t.equal(await events('projects.updated'), 1, 'the first write after it has its event')
  if (onPostgres) t.equal(triedAlone(), 1, 'tried alone, changed nothing, then ran in a transaction')

  sent.length = 0
  await rename('heard again')
  const second = await store.insert(projects, values('created while heard'))
  t.equal(await events('projects.updated'), 2)
  t.equal(await events('projects.created'), 1)
  t.equal(await store.remove(projects, second.id, () => {}), 'removed')
  t.equal(await events('projects.deleted'), 1)
  t.equal(triedAlone(), 0, 'while the subscription stays, no write is tried alone')
  if (onPostgres) {
    t.ok(sent.some(query => query.sql.includes('from "projects" where "id" = any(')), 'PostgreSQL: an edit in a transaction read its record before it, with the turn\'s other reads by id')
  }

  await other.run(`update ${WEBHOOKS_TABLE} set "disabledAt" = '2026-01-02T00:00:00.000Z'`)
  await rename('unheard')
  sent.length = 0
  await rename('unheard again')
  t.equal(await events(), 4, 'once it is disabled, no more events')
  if (onPostgres) t.equal(triedAlone(), 1, 'and writes are tried alone again')
  t.equal((await store.get(projects, project.id))?.values.name, 'unheard again')
  t.equal((await store.get(projects, project.id))?.version, 5, 'every write landed once')
})

t.test('edits racing on one record without If-Match all land, each on the record as the last left it', async t => {
  const app = await buildTestApp(t)
  const other = await otherConnection(t)
  const project = await createProject(app, { name: 'raced', budget: 0 })
  const url = `/v1/projects/${project.id as number}`
  const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => await app.inject({ method: 'PATCH', url, payload: { name: `edit ${i}` } })))
  t.same(answers.map(answer => answer.statusCode), Array.from({ length: 20 }, () => 200))
  t.equal(new Set(answers.map(answer => answer.headers.etag)).size, 20, 'twenty versions, none answered twice')
  t.equal(await other.count('projects', `id = ${project.id as number} and version = 21`), 1, 'and none lost')
})
