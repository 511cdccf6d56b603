/**
 * Every order a client may ask a collection for is read off an index: the
 * database's own plan for the very query the store sends has no sort step.
 * Without such an index a page sorts the whole table per request, O(n log n)
 * (345 ms on a million SQLite rows for `sort=-createdAt`), and on SQLite that
 * holds up every other request while it runs. Runs on SQLite and PostgreSQL.
 */
import { randomBytes } from 'node:crypto'
import { CompiledQuery, sql, type Kysely } from 'kysely'
import t from 'tap'
import { resources } from '../../schemas/index.js'
import { cursorCodec } from '../../src/resources/cursor.js'
import { buildModel } from '../../src/resources/model.js'
import { parseListQuery } from '../../src/resources/query.js'
import { sortKeys } from '../../src/resources/query-schema.js'
import type { Database, Dialect } from '../../src/store/dialect.js'
import { openPostgres } from '../../src/store/postgres.js'
import { createSqlStore } from '../../src/store/sql-store.js'
import { openSqlite } from '../../src/store/sqlite.js'
import { ON_POSTGRES, testDatabaseUrl } from '../helper.js'

interface PlanNode { 'Node Type': string, Plans?: PlanNode[] }

const nodeTypes = (node: PlanNode): string[] => [node['Node Type'], ...(node.Plans ?? []).flatMap(nodeTypes)]

/** The steps of the database's plan for a query that would sort if no index served its order. */
async function sortSteps (db: Kysely<Database>, query: CompiledQuery): Promise<string[]> {
  if (!ON_POSTGRES) {
    const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]))
    return rows.map(row => row.detail).filter(detail => detail.includes('B-TREE FOR ORDER BY'))
  }
  // On an empty table a sort is the cheapest plan whatever the indexes; with sorting priced out,
  // the planner still sorts only where no index can give the order.
  return await db.transaction().execute(async trx => {
    await sql`set local enable_sort = off`.execute(trx)
    await sql`set local enable_incremental_sort = off`.execute(trx)
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(CompiledQuery.raw(`explain (format json) ${query.sql}`, [...query.parameters]))
    return nodeTypes(rows[0]!['QUERY PLAN'][0]!.Plan).filter(type => type.includes('Sort'))
  })
}

t.test('every sort key, either direction, page or cursor, is read in order from an index', async t => {
  const url = await testDatabaseUrl(t)
  const dialect: Dialect = ON_POSTGRES
    ? openPostgres({ url, poolSize: 2, timeoutMs: 5000 })
    : openSqlite({ file: url.slice('sqlite:'.length), synchronous: 'NORMAL' })
  // The store's queries, as it sends them: what the database plans is what runs.
  const sent: CompiledQuery[] = []
  const execute = dialect.db.executeQuery.bind(dialect.db)
  dialect.db.executeQuery = async query => {
    sent.push('compile' in query ? query.compile() : query)
    return await execute(query)
  }
  const model = buildModel(resources)
  const store = createSqlStore(dialect, model, { apiKeyCacheMs: 0 })
  t.teardown(async () => { await store.close() })
  await store.migrate()
  const cursors = cursorCodec(randomBytes(32))

  for (const resource of model.resources) {
    for (const key of sortKeys(resource)) {
      const queries: Array<Record<string, string>> = [{ sort: key }, { sort: `-${key}` }, { sort: `-${key}`, cursor: '' }]
      for (const raw of queries) {
        const list = parseListQuery(resource, raw, { now: new Date(), cursors })
        sent.length = 0
        await store.list(resource, list.store)
        t.equal(sent.length, 1, 'one query per page')
        t.same(await sortSteps(dialect.db, sent[0]!), [], `${resource.collection}?${new URLSearchParams(raw).toString()}: no sort step`)
      }
    }
  }
})
