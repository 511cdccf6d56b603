/**
 * A tally whose triggers are gone drifts from the rows without a sound: a
 * restore that left triggers out, one dropped by hand, or a PostgreSQL
 * database from before derived names were fitted to 63 bytes, whose triggers
 * carry the names PostgreSQL cut (and counted twice once the fitted ones were
 * added beside them). A start puts such a tally back: its triggers, and its
 * counts taken afresh from the rows. Runs on SQLite and PostgreSQL.
 */
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { defineResource } from '../../src/resources/define.js'
import { fitName, POSTGRES_MAX_NAME_BYTES } from '../../src/store/identifiers.js'
import { tallyTriggers } from '../../src/store/tally-triggers.js'
import { authenticatedByDefault, buildTestApp, createProject, ON_POSTGRES, post, testConfig } from '../helper.js'
import { otherConnection, totalCount } from '../support/other-connection.js'

const dropTrigger = (name: string, table: string): string => ON_POSTGRES ? `drop trigger "${name}" on "${table}"` : `drop trigger "${name}"`

t.test('a tally whose triggers were dropped is put back on the next start, counted afresh', async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const project = await createProject(app)
  for (const status of ['todo', 'todo', 'doing', 'done']) t.equal((await post(app, '/v1/tasks', { name: 'a task', projectId: project.id, status })).statusCode, 201)

  const [rowInserts] = tallyTriggers('tasks')
  const [statusInserts] = tallyTriggers('tasks', 'status')
  await db.run(dropTrigger(rowInserts!, 'tasks'))
  await db.run(dropTrigger(statusInserts!, 'tasks'))
  for (const status of ['todo', 'done']) {
    await db.run(`insert into "tasks" ("version", "createdAt", "updatedAt", "name", "projectId", "status", "priority")
      values (1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'written around the service', ${String(project.id)}, '${status}', 3)`)
  }
  t.equal(await totalCount(app, '/v1/tasks'), 4, 'without its triggers the tally missed the two rows (what the repair is for)')
  t.equal(await totalCount(app, '/v1/tasks?status=todo'), 2)

  const { applied } = await app.store.migrate()
  t.same(applied.filter(change => change.startsWith('count ')).sort(), ['count rows of tasks', 'count values of tasks.status'], 'the start names what it put back, and only that')
  t.equal(await totalCount(app, '/v1/tasks'), await db.count('tasks'), 'the row count is the rows again')
  t.equal(await db.count('tasks'), 6)
  for (const [query, condition] of [['status=todo', '"status" = \'todo\''], ['status=done', '"status" = \'done\''], ['filter=active', '"status" <> \'done\'']] as const) {
    t.equal(await totalCount(app, `/v1/tasks?${query}`), await db.count('tasks', condition), query)
  }

  t.equal((await post(app, '/v1/tasks', { name: 'after the repair', projectId: project.id, status: 'done' })).statusCode, 201)
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/tasks/1' })).statusCode, 204)
  t.equal(await totalCount(app, '/v1/tasks'), 6, 'the triggers count again')
  t.equal(await totalCount(app, '/v1/tasks?status=done'), await db.count('tasks', '"status" = \'done\''))
  t.same((await app.store.migrate()).applied, [], 'a tally in place is left alone')
})

// Two fields whose derived names run past 63 bytes.
const longField = 'theStageOfThisGadgetAsSeenByTheWarehouseTeamInTheirMonthReview'
const gadgets = defineResource({
  collection: 'warehouse-gadgets',
  fields: Type.Object({ name: Type.String(), [longField]: Type.Union([Type.Literal('new'), Type.Literal('old')], { default: 'new' }) }),
  filterable: [longField]
})

t.test('PostgreSQL: triggers left under the names it cut to 63 bytes are replaced, not doubled', { skip: ON_POSTGRES ? false : 'PostgreSQL only: SQLite keeps whole names' }, async t => {
  const config = await testConfig(t)
  const app = authenticatedByDefault(await buildApp({ config, definitions: [gadgets] }))
  t.teardown(() => app.close())
  const db = await otherConnection(t)
  for (const stage of ['new', 'old', 'new']) t.equal((await post(app, '/v1/warehouse-gadgets', { name: 'g', [longField]: stage })).statusCode, 201)

  // As a version before fitted names left it: none under the fitted names, and under the name both cut
  // to, whichever it made last (here the insert trigger, so that a survivor would count new rows twice).
  const table = 'warehouse-gadgets'
  const fitted = (name: string): string => fitName(name, POSTGRES_MAX_NAME_BYTES)
  const [inserts, deletes] = tallyTriggers(table, longField) as [string, string]
  const counting = fitted(`resourcery_count_${table}_${longField}`)
  for (const [name, event, transition] of [[deletes, 'delete', 'old'], [inserts, 'insert', 'new']] as const) {
    const cut = name.slice(0, POSTGRES_MAX_NAME_BYTES)
    t.not(cut, fitted(name), 'the name is one PostgreSQL would have cut')
    await db.run(dropTrigger(fitted(name), table))
    await db.run(`drop trigger if exists "${cut}" on "${table}"`)
    await db.run(`create trigger "${cut}" after ${event} on "${table}" referencing ${transition} table as changed_rows for each statement execute function "${counting}"()`)
  }

  const { applied } = await app.store.migrate()
  t.ok(applied.includes(`count values of ${table}.${longField}`), 'the start puts the tally back')
  t.equal((await post(app, '/v1/warehouse-gadgets', { name: 'g', [longField]: 'new' })).statusCode, 201)
  t.equal(await totalCount(app, `/v1/warehouse-gadgets?${longField}=new`), 3, 'a new row counts once, not twice')
  t.equal(await totalCount(app, `/v1/warehouse-gadgets?${longField}=old`), 1)
  t.same((await app.store.migrate()).applied, [], 'and the next start has nothing to do')
})

t.test('PostgreSQL: tally functions an older version made are renewed on the next start, their counts kept', { skip: ON_POSTGRES ? false : 'PostgreSQL only: SQLite keeps no shards to pick from' }, async t => {
  const app = await buildTestApp(t)
  const db = await otherConnection(t)
  const project = await createProject(app)
  const created = await Promise.all(['todo', 'todo', 'doing'].map(async status => await post(app, '/v1/tasks', { name: 'a task', projectId: project.id, status })))
  t.same(created.map(answer => answer.statusCode), [201, 201, 201])

  // As versions before 12-06 made it: a shard picked at random for every row a statement changed.
  const changes = 'resourcery_count_tasks_status_changes'
  await db.run(`create or replace function "${changes}"() returns trigger language plpgsql as $$
    declare
      picked integer := floor(random() * 64);
    begin
      insert into "resourcery_value_counts" (collection, field, value, shard, total)
      select 'tasks', 'status', value, picked, sum(delta) from (values (cast(old."status" as text), -1), (cast(new."status" as text), 1)) as changes (value, delta)
      where value is not null group by value order by value
      on conflict (collection, field, value, shard) do update set total = "resourcery_value_counts".total + excluded.total;
      return null;
    end $$`)
  const renewed = `pronamespace = current_schema()::regnamespace and proname = '${changes}' and prosrc like '%hashtextextended(txid_current()%' and proconfig is not null`
  t.equal(await db.count('pg_proc', renewed), 0, 'the older function in place')

  const { applied } = await app.store.migrate()
  t.same(applied, [`renew tally function ${changes}`], 'the start renews that function, and does nothing else')
  t.equal(await db.count('pg_proc', renewed), 1, 'with this version\'s shard pick and its search path')

  const moved = await app.inject({ method: 'PATCH', url: created[0]!.headers.location!, payload: { status: 'done' } })
  t.equal(moved.statusCode, 200)
  for (const [status, count] of [['todo', 1], ['doing', 1], ['done', 1]] as const) {
    t.equal(await totalCount(app, `/v1/tasks?status=${status}`), count, `${status}: counted as before, and the edit with it`)
  }
  t.same((await app.store.migrate()).applied, [], 'and the next start has nothing to do')
})
