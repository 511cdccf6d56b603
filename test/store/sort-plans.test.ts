/**
 * Every order a client may ask a collection for is read off an index: the
 * database's own plan for the very query the store sends has no sort step.
 * Without such an index a page sorts the whole table per request, O(n log n)
 * (345 ms on a million SQLite rows for `sort=-createdAt`), and on SQLite that
 * holds up every other request while it runs. Nor does a whole collection's
 * count read the collection: it reads the collection's tally (row-counts.ts).
 * Runs on SQLite and PostgreSQL.
 */
import { randomBytes } from 'node:crypto'
import { CompiledQuery, sql, type Kysely } from 'kysely'
import t from 'tap'
import { cursorCodec, type CursorCodec } from '../../src/resources/cursor.js'
import type { Resource } from '../../src/resources/model.js'
import { parseListQuery } from '../../src/resources/query.js'
import { sortKeys } from '../../src/resources/query-schema.js'
import type { Database } from '../../src/store/dialect.js'
import { DEFERRED_FROM_OFFSET } from '../../src/store/list-query.js'
import type { Store } from '../../src/store/store.js'
import { ON_POSTGRES } from '../helper.js'
import { recordingStore } from '../support/recording-store.js'

interface PlanNode { 'Node Type': string, 'Relation Name'?: string, 'Index Cond'?: string, 'Recheck Cond'?: string, Plans?: PlanNode[] }

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

/** The first page of the default length (20) past DEFERRED_FROM_OFFSET. */
const DEEP_PAGE = Math.ceil(DEFERRED_FROM_OFFSET / 20) + 1

const sortSteps = (steps: PlanNode[]): string[] => steps.map(step => step['Node Type']).filter(type => /Sort|B-TREE FOR ORDER BY/.test(type))

/**
 * The queries a page of `raw` sends: one, or on SQLite after a cursor's
 * position that several index ranges follow, one per range (on an empty
 * table, each of them), read in turn.
 */
async function pageQueries (store: Store, sent: CompiledQuery[], resource: Resource, raw: Record<string, string | number>, cursors: CursorCodec): Promise<CompiledQuery[]> {
  sent.length = 0
  await store.list(resource, parseListQuery(resource, raw, { now: new Date(), cursors }).store)
  if (sent.length === 0) throw new Error('a page sent no query')
  return [...sent]
}

/** The steps of the plans of every query a page sends. */
async function pagePlan (db: Kysely<Database>, queries: readonly CompiledQuery[]): Promise<PlanNode[]> {
  return (await Promise.all(queries.map(async query => await plan(db, query)))).flat()
}

t.test('every sort key, either direction, page or cursor, is read in order from an index', async t => {
  const { store, dialect, sent, model } = await recordingStore(t)
  const cursors = cursorCodec(randomBytes(32))
  for (const resource of model.resources) {
    for (const key of sortKeys(resource)) {
      // A deep page (a number, as validation leaves it) has its ids found first, then its rows read in their order.
      const queries: Array<Record<string, string | number>> = [{ sort: key }, { sort: `-${key}` }, { sort: `-${key}`, cursor: '' }, { sort: key, page: DEEP_PAGE }, { sort: `-${key}`, page: DEEP_PAGE }]
      for (const raw of queries) {
        const steps = await pagePlan(dialect.db, await pageQueries(store, sent, resource, raw, cursors))
        t.same(sortSteps(steps), [], `${resource.collection}?${new URLSearchParams(Object.entries(raw).map(([name, value]): [string, string] => [name, String(value)])).toString()}: no sort step`)
      }
    }
  }
})

t.test('a deep page skips its offset on the sort\'s index alone and reads only its own rows', async t => {
  const { store, dialect, sent, model } = await recordingStore(t)
  const cursors = cursorCodec(randomBytes(32))
  for (const resource of model.resources) {
    for (const key of sortKeys(resource)) {
      for (const sort of [key, `-${key}`]) {
        // Every read is of this one table; SQLite names it by its alias in the query, and calls the ids' co-routine a scan of `page`.
        const reads = (await pagePlan(dialect.db, await pageQueries(store, sent, resource, { sort, page: DEEP_PAGE }, cursors))).filter(step => step['Relation Name'] !== undefined && step['Relation Name'] !== 'page')
        const described = reads.map(step => step['Node Type']).join('; ')
        // SQLite's table is itself ordered by id, the rows it skips are then the table's (as plain as before).
        const skipping = reads.filter(step => ON_POSTGRES ? step['Node Type'] === 'Index Only Scan' : /^SCAN \w+ USING COVERING INDEX /.test(step['Node Type']) || (key === 'id' && /^SCAN \w+$/.test(step['Node Type'])))
        const fetching = reads.filter(step => step['Index Cond'] !== undefined)
        t.ok(reads.length === 2 && skipping.length === 1 && fetching.length === 1, `${resource.collection}?sort=${sort}&page=${DEEP_PAGE}: one index-only read, one read of the rows by id (${described})`)
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
          const reads = (await pagePlan(dialect.db, await pageQueries(store, sent, resource, raw, cursors))).filter(step => step['Relation Name'] === resource.collection)
          t.ok(reads.length > 0 && reads.every(step => step['Index Cond'] !== undefined),
            `${resource.collection}?sort=${sort} after ${JSON.stringify(value)}: every read of the table is bounded by the index (${reads.map(step => step['Node Type']).join('; ')})`)
        }
      }
    }
  }
})

t.test("a whole collection's count reads its tally, not the collection", async t => {
  const { store, dialect, sent, model } = await recordingStore(t)
  for (const resource of model.resources) {
    sent.length = 0
    await store.count(resource, [])
    // Every query the count sent (on PostgreSQL the change stamp's too), as the tables it reads.
    const steps = (await Promise.all(sent.map(async query => await plan(dialect.db, query)))).flat()
    const reads = steps.filter(step => step['Relation Name'] !== undefined)
    // A bitmap heap scan reads the rows its bitmap index scan found, by the same condition.
    t.ok(reads.length > 0 && reads.every(step => step['Relation Name'] === 'resourcery_row_counts' && (step['Index Cond'] ?? step['Recheck Cond']) !== undefined),
      `${resource.collection}: reads only its own tally rows (${steps.map(step => step['Node Type']).join('; ')})`)
  }
})
