/**
 * PostgreSQL's named prepared statements (src/store/prepared-statements.ts):
 * the hot statements are prepared once per connection, none that a column
 * added by another process would break, and they keep working when a newer
 * version's migration adds one during a rolling deploy. PostgreSQL only, on
 * the test server whichever run this is.
 */
import { sql } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import { openPostgres } from '../../src/store/postgres.js'
import { namesItsColumns, PREPARED_PER_CONNECTION, preparingPool } from '../../src/store/prepared-statements.js'
import { createSqlStore } from '../../src/store/sql-store.js'
import { body, buildTestApp, createProject, freshSchema, post, TEST_POSTGRES_URL } from '../helper.js'
import { answers } from '../support/tcp-proxy.js'

const skip = await answers(Number(new URL(TEST_POSTGRES_URL).port || 5432))
  ? false
  : `PostgreSQL is not reachable at ${TEST_POSTGRES_URL}; start it to run these tests (CI always has it)`

/** The service on a fresh schema with one connection, and what that connection has prepared. */
async function serviceOnOneConnection (t: Test, prepare: boolean) {
  const url = await freshSchema(t)
  const dialect = openPostgres({ url, poolSize: 1, timeoutMs: 5000, prepare })
  const store = createSqlStore(dialect, buildModel(resources), { apiKeyCacheMs: 0 })
  await store.migrate()
  const app = await buildTestApp(t, { store, databaseUrl: url })
  const prepared = async (): Promise<string[]> =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(dialect.db)).rows.map(row => row.statement)
  return { app, url, prepared }
}

t.test('the hot statements are prepared, and a column another process adds does not break them', { skip }, async t => {
  const { app, url, prepared } = await serviceOnOneConnection(t, true)
  const project = await createProject(app)
  const created = body(await post(app, '/v1/tasks', { name: 'first', projectId: project.id }))
  const path = `/v1/tasks/${created.id as number}`
  for (let round = 0; round < 2; round++) {
    t.equal((await app.inject({ method: 'GET', url: path })).statusCode, 200)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tasks?status=todo&limit=5' })).statusCode, 200)
    t.equal((await app.inject({ method: 'PATCH', url: path, headers: { 'if-match': '*' }, payload: { priority: 2 + round } })).statusCode, 200)
  }

  const statements = await prepared()
  const on = (pattern: RegExp): number => statements.filter(statement => pattern.test(statement)).length
  t.equal(on(/^select "id", "version", "createdAt", "updatedAt", .* from "tasks" where "id" = any\(\$1\)$/), 1,
    'GET one, by its columns, once (with the other reads by id of its turn: id-batches.ts), which a PATCH reads its row with too')
  t.equal(on(/^select "id", "version", "createdAt", "updatedAt", .* from "tasks" where "id" = \$1$/), 0, 'no read of one row alone')
  t.equal(on(/^insert into "tasks" .* returning "id", "version"/), 1, 'the insert')
  t.equal(on(/^update "tasks" set .* returning "id", "version"/), 1, 'the update')
  t.equal(on(/from "tasks" where "status" = \$1 order by "id" asc limit \$2 offset \$3$/), 1, 'the filtered page')
  t.same(statements.filter(statement => !namesItsColumns(statement)), [], 'none with a * in its result')

  // A newer version's additive migration, run by another process while this one serves.
  const other = new pg.Client({ connectionString: url })
  await other.connect()
  t.teardown(async () => { await other.end() })
  await other.query('alter table tasks add column "estimate" bigint')
  await other.query('alter table projects add column "code" text')

  const read = await app.inject({ method: 'GET', url: path })
  t.equal(read.statusCode, 200, `GET one after the column was added: ${read.body}`)
  t.equal(body(read).priority, 3, 'the stored value')
  t.notOk('estimate' in body(read), 'the column this version does not know is not shown')
  t.equal((await app.inject({ method: 'GET', url: '/v1/tasks?status=todo&limit=5' })).statusCode, 200, 'the page')
  const patched = await app.inject({ method: 'PATCH', url: path, headers: { 'if-match': '*' }, payload: { priority: 5 } })
  t.equal(patched.statusCode, 200, `PATCH: ${patched.body}`)
  t.equal(body(patched).priority, 5)
  const second = await post(app, '/v1/tasks', { name: 'second', projectId: project.id })
  t.equal(second.statusCode, 201, `POST: ${second.body}`)
  t.equal((await app.inject({ method: 'GET', url: `/v1/projects/${project.id as number}` })).statusCode, 200, 'a read of the other table')
  t.equal((await app.inject({ method: 'DELETE', url: path })).statusCode, 204, 'DELETE')
  t.same((await other.query('select name from tasks order by id')).rows, [{ name: 'second' }], 'every write landed')
})

t.test('a column retyped by hand under the service fails a prepared statement once, not for the life of the connection', { skip }, async t => {
  const { app, url } = await serviceOnOneConnection(t, true)
  const project = await createProject(app)
  const path = `/v1/tasks/${body(await post(app, '/v1/tasks', { name: 'first', projectId: project.id })).id as number}`
  const get = async () => await app.inject({ method: 'GET', url: path })
  const patch = async (priority: number) => await app.inject({ method: 'PATCH', url: path, headers: { 'if-match': '*' }, payload: { priority } })
  t.equal((await get()).statusCode, 200)
  t.equal((await patch(2)).statusCode, 200)

  const other = new pg.Client({ connectionString: url })
  await other.connect()
  t.teardown(async () => { await other.end() })
  // bigint to integer: every prepared statement that returns the column now returns another type.
  await other.query('alter table tasks alter column priority type integer')

  const statuses = [(await get()).statusCode, (await get()).statusCode, (await get()).statusCode]
  t.ok(statuses[0] === 200 || statuses[0] === 500, `GET: at most the first fails (${statuses.join(', ')})`)
  t.same(statuses.slice(1), [200, 200], 'then the statement is prepared anew')
  // A PATCH reads its row as the GETs do (id-batches.ts) and runs one statement they do not: the update, which fails at most once.
  const writes = [(await patch(4)).statusCode, (await patch(5)).statusCode, (await patch(5)).statusCode]
  t.ok(writes[0] === 200 || writes[0] === 500, `PATCH: at most the first fails (${writes.join(', ')})`)
  t.same(writes.slice(1), [200, 200])
  t.equal(body(await get()).priority, 5, 'and what was acknowledged is stored')
})

t.test('with prepared statements off, nothing is prepared', { skip }, async t => {
  const { app, prepared } = await serviceOnOneConnection(t, false)
  const project = await createProject(app)
  t.equal((await app.inject({ method: 'GET', url: `/v1/projects/${project.id as number}` })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects?limit=5' })).statusCode, 200)
  t.same(await prepared(), [])
})

t.test(`a connection prepares at most ${PREPARED_PER_CONNECTION} statements; the rest run unnamed`, { skip }, async t => {
  const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 })
  t.teardown(async () => { await pool.end() })
  const client = await preparingPool(pool).connect()
  t.teardown(() => { client.release() })
  const shapes = PREPARED_PER_CONNECTION + 20
  for (let round = 0; round < 2; round++) {
    for (let shape = 0; shape < shapes; shape++) {
      const { rows } = await client.query<{ n: number }>(`select $1::int + ${shape} as n`, [round])
      if (rows[0]?.n !== round + shape) t.fail(`shape ${shape}, round ${round}: ${JSON.stringify(rows)}`)
    }
  }
  const { rows } = await client.query<{ n: string }>('select count(*) as n from pg_prepared_statements', [])
  t.equal(Number(rows[0]!.n), PREPARED_PER_CONNECTION, `${shapes} shapes, each answered twice`)
  const starred = await client.query<{ n: number }>('select * from (select $1::int as n) as one', [7])
  t.same(starred.rows, [{ n: 7 }], 'a statement with a * is answered, unnamed')
})

t.test('which statements name their result columns', async t => {
  t.ok(namesItsColumns('select "id", "name" from "tasks" where "id" = $1'))
  t.ok(namesItsColumns('select count(*) as "n" from "tasks"'))
  t.ok(namesItsColumns('select COUNT(*) from "tasks"'))
  t.notOk(namesItsColumns('select * from "tasks" where "id" = $1'))
  t.notOk(namesItsColumns('insert into "tasks" ("name") values ($1) returning *'))
  t.notOk(namesItsColumns('select "t".* from "tasks" as "t"'))
})
