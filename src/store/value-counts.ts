/**
 * Row counts per value, kept by the database, for the columns whose values
 * form a small closed set: booleans and enums (`status`, `active`). The
 * filters people page through most are on them (`filter=active` is
 * `status ne done`), and counting their matches scans every row: on SQLite
 * with 1,000,000 tasks, 45 ms that hold up the whole process after every
 * write. With the tally, a count of conditions on one such column adds a few
 * numbers instead.
 *
 * Kept by the dialect's triggers (`Dialect.keepValueCounts`) on insert,
 * delete and an update that changes the value: row triggers on SQLite; on
 * PostgreSQL statement triggers for inserts and deletes and a row trigger for
 * such updates, each adding to one of `Dialect.tallyShards` rows per value
 * (postgres-tallies.ts). An update of other columns fires none of them.
 */
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Condition } from '../resources/define.js'
import type { Database, Dialect } from './dialect.js'
import { countValue, ROW_COUNTS_TABLE } from './row-counts.js'
import { MIGRATIONS_TABLE, type TableSpec } from './tables.js'
import { tallyKept } from './tally-triggers.js'

export const VALUE_COUNTS_TABLE = 'resourcery_value_counts'

/** How a tallied value is keyed: the text of what the driver stores (`todo`; `1` for true on SQLite). */
export const valueKey = (stored: unknown): string => String(stored)

const installed = (table: string, column: string): string => `count values of ${table}.${column}`

/**
 * Starts keeping the value counts of every tallied column that has none yet,
 * or whose triggers are gone (tally-triggers.ts): its triggers, then its rows counted once, inside the migration transaction
 * (creating a trigger locks the table on PostgreSQL; SQLite has one writer),
 * so no write falls between the two. The migration log says which columns
 * are kept.
 */
export async function countValues (trx: Transaction<Database>, dialect: Dialect, specs: readonly TableSpec[]): Promise<string[]> {
  // Where a value's count is spread over shards (PostgreSQL), each has one row per shard.
  const sharded = dialect.tallyShards > 1
  const create = trx.schema.createTable(VALUE_COUNTS_TABLE).ifNotExists()
    .addColumn('collection', 'text', column => column.notNull())
    .addColumn('field', 'text', column => column.notNull())
    .addColumn('value', 'text', column => column.notNull())
    .addColumn('total', dialect.columnType('integer'), column => column.notNull())
  const key = `${VALUE_COUNTS_TABLE}_pkey`
  await (sharded
    ? create.addColumn('shard', dialect.columnType('integer'), column => column.notNull()).addPrimaryKeyConstraint(key, ['collection', 'field', 'value', 'shard'])
    : create.addPrimaryKeyConstraint(key, ['collection', 'field', 'value'])
  ).execute()
  const done = new Set((await trx.selectFrom(MIGRATIONS_TABLE).select('change').where('change', 'like', 'count values of %').execute()).map(row => String(row.change)))
  const triggers = await dialect.triggerNames(trx)
  const applied: string[] = []
  for (const { name: table, tallied } of specs) {
    for (const column of tallied.filter(column => !done.has(installed(table, column)) || !tallyKept(triggers, dialect, table, column))) {
      await dialect.keepValueCounts(trx, table, column)
      const counted = await trx.selectFrom(table).select([sql.ref(column).as('value'), eb => eb.fn.countAll<number>().as('n')])
        .where(column, 'is not', null).groupBy(column).execute()
      // A column tallied again (its log entry or a trigger lost) starts over from the rows themselves.
      await trx.deleteFrom(VALUE_COUNTS_TABLE).where('collection', '=', table).where('field', '=', column).execute()
      if (counted.length > 0) {
        await trx.insertInto(VALUE_COUNTS_TABLE).values(counted.map(row => ({
          collection: table, field: column, value: valueKey(row.value), ...sharded ? { shard: 0 } : {}, total: countValue(row)
        }))).execute()
      }
      applied.push(installed(table, column))
    }
  }
  return applied
}

/** The tallies of one column, and the collection's row count, read together (one statement, one snapshot). */
export interface ValueTally {
  /** Stored value's key → rows holding it. */
  readonly counts: ReadonlyMap<string, number>
  readonly rows: number
}

export async function readValueTally (db: Kysely<Database>, collection: string, field: string): Promise<ValueTally> {
  const rows = await db.selectFrom(VALUE_COUNTS_TABLE).select(['value', eb => eb.fn.sum<number>('total').as('total')])
    .where('collection', '=', collection).where('field', '=', field).groupBy('value')
    .unionAll(db.selectFrom(ROW_COUNTS_TABLE).select([sql<null>`null`.as('value'), eb => eb.fn.sum<number>('total').as('total')]).where('collection', '=', collection))
    .execute()
  const counts = new Map<string, number>()
  let total = 0
  for (const row of rows) {
    const n = countValue({ n: row.total })
    if (row.value === null) total = n
    else counts.set(String(row.value), n)
  }
  return { counts, rows: total }
}

/**
 * The one column that all of `conditions` test with `eq`, `ne` or `in`, which
 * a tally can answer, or undefined.
 */
export function talliedColumn (tallied: ReadonlySet<string>, conditions: readonly Condition[]): string | undefined {
  const field = conditions[0]?.field
  if (field === undefined || !tallied.has(field)) return undefined
  return conditions.every(item => item.field === field && (item.op === 'eq' || item.op === 'ne' || item.op === 'in')) ? field : undefined
}

/**
 * How many rows match every condition (on one tallied column, see
 * `talliedColumn`), from the counts per value and the collection's row count:
 * rows without a value are the difference. `ne` is `IS DISTINCT FROM`, as in
 * conditions.ts: a row without a value is not equal. `keyOf` keys a condition's
 * value as the tally does (encoded as stored, then `valueKey`).
 */
export function tallyCount ({ counts, rows }: ValueTally, conditions: readonly Condition[], keyOf: (value: unknown) => string): number {
  const tests = conditions.map(({ op, value }) => ({ op, keys: (op === 'in' ? value as unknown[] : [value]).map(keyOf) }))
  const holds = (key: string | null): boolean => tests.every(({ op, keys }) => {
    if (op === 'ne') return key !== keys[0]
    return key !== null && keys.includes(key)
  })
  let total = 0
  let valued = 0
  for (const [key, count] of counts) {
    valued += count
    if (holds(key)) total += count
  }
  return holds(null) ? total + rows - valued : total
}
