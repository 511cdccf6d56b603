/**
 * Every order a client may ask a collection for is read off an index: the
 * database's own plan for the very query the store sends has no sort step.
 * Without such an index a page sorts the whole table per request, O(n log n)
 * (345 ms on a million SQLite rows for `sort=-createdAt`), and on SQLite that
 * holds up every other request while it runs. Runs on SQLite and PostgreSQL.
 */
import { randomBytes } from 'node:crypto'
import { CompiledQuery, sql, type Kysely } from 'kysely'
import t, { type Test } from 'tap'
import { resources } from '../../schemas/index.js'
import { cursorCodec, type CursorCodec } from '../../src/resources/cursor.js'
import { buildModel, type Model, type Resource } from '../../src/resources/model.js'
import { parseListQuery } from '../../src/resources/query.js'
import { sortKeys } from '../../src/resources/query-schema.js'
import type { Database, Dialect } from '../../src/store/dialect.js'
import { openPostgres } from '../../src/store/postgres.js'
import { createSqlStore } from '../../src/store/sql-store.js'
import { openSqlite } from '../../src/store/sqlite.js'
import type { Store } from '../../src/store/store.js'
import { ON_POSTGRES, testDatabaseUrl } from '../helper.js'

interface PlanNode { 'Node Type': string, 'Relation Name'?: string, 'Index Cond'?: string, Plans?: PlanNode[] }

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)]

/** The database's plan for a query, as its steps. */
async function plan (db: Kysely<Database>, query: CompiledQuery): Promise<PlanNode[]> {
  if (!ON_POSTGRES) {
    const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]))
    // SQLite says SCAN (from one end) or SEARCH (seeking to a bound) and which table, and when it sorts.
    return rows.map(({ detail }) => {
      const table = /^(?:SCAN|SEARCH) (\w+)/.exec(detail)?.[1]
      return { 'Node Type': detail, ...(table === undefined ? {} : { 'Relation Name': table }), ...(/^SEARCH .*\(.+\)$/.test(detail) ? { 'Index Cond': detail } : {}) }
    })
  }
  // On an empty table a sort or a full scan is the cheapest plan whatever the indexes; with both
  // priced out, the planner still chooses them only where no index can give the order or the bound.
  return await db.transaction().execute(async trx => {
    for (const setting of ['enable_sort', 'enable_incremental_sort', 'enable_seqscan']) await sql`select set_config(${setting}, 'off', true)`.execute(trx)
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(CompiledQuery.raw(`explain (format json) ${query.sql}`, [...query.parameters]))
    return nodes(rows[0]!['QUERY PLAN'][0]!.Plan)
  })
}

const sortSteps = (steps: PlanNode[]): string[] => steps.map(step => step['Node Type']).filter(type => /Sort|B-TREE FOR ORDER BY/.test(type))

/** The example model's store on the test's database, recording the queries it sends. */
async function recordingStore (t: Test): Promise<{ store: Store, dialect: Dialect, sent: CompiledQuery[], model: Model }> {
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
  return { store, dialect, sent, model }
}

/** The one query a page of `raw` sends. */
async function pageQuery (store: Store, sent: CompiledQuery[], resource: Resource, raw: Record<string, string>, cursors: CursorCodec): Promise<CompiledQuery> {
  sent.length = 0
  await store.list(resource, parseListQuery(resource, raw, { now: new Date(), cursors }).store)
  if (sent.length !== 1) throw new Error(`a page sent ${sent.length} queries`)
  return sent[0]!
}

t.test('every sort key, either direction, page or cursor, is read in order from an index', async t => {
  const { store, dialect, sent, model } = await recordingStore(t)
  const cursors = cursorCodec(randomBytes(32))
  for (const resource of model.resources) {
    for (const key of sortKeys(resource)) {
      const queries: Array<Record<string, string>> = [{ sort: key }, { sort: `-${key}` }, { sort: `-${key}`, cursor: '' }]
      for (const raw of queries) {
        const steps = await plan(dialect.db, await pageQuery(store, sent, resource, raw, cursors))
        t.same(sortSteps(steps), [], `${resource.collection}?${new URLSearchParams(raw).toString()}: no sort step`)
      }
    }
  }
})

/** A value of a sort key's type, for a cursor's position. */
function positionValue (resource: Resource, key: string): unknown {
  if (key === 'id') return 7
  if (key === 'createdAt' || key === 'updatedAt') return '2026-01-01T00:00:00.000Z'
  const schema = resource.fields.get(key)!.schema as { type?: string, enum?: unknown[] }
  return schema.enum?.[0] ?? (schema.type === 'string' ? 'm' : schema.type === 'boolean' ? true : 3)
}

t.test('a cursor page enters the index at its position instead of reading up to it', async t => {
  const { store, dialect, sent, model } = await recordingStore(t)
  const cursors = cursorCodec(randomBytes(32))
  for (const resource of model.resources) {
    for (const key of sortKeys(resource)) {
      const field = resource.fields.get(key)
      const missing = field !== undefined && !field.required && !field.hasDefault
      // A position on a key that can be missing may itself be missing (the last page's item had none).
      for (const value of missing ? [positionValue(resource, key), null] : [positionValue(resource, key)]) {
        for (const sort of [key, `-${key}`]) {
          const { sort: canonical } = parseListQuery(resource, { sort }, { now: new Date(), cursors })
          const raw = { sort, cursor: cursors.encode({ sort: canonical, values: key === 'id' ? [7] : [value, 7] }) }
          const reads = (await plan(dialect.db, await pageQuery(store, sent, resource, raw, cursors))).filter(step => step['Relation Name'] === resource.collection)
          t.ok(reads.length > 0 && reads.every(step => step['Index Cond'] !== undefined),
            `${resource.collection}?sort=${sort} after ${JSON.stringify(value)}: every read of the table is bounded by the index (${reads.map(step => step['Node Type']).join('; ')})`)
        }
      }
    }
  }
})
