/**
 * Row counts the database keeps itself. Triggers add every row inserted into a
 * collection to its tally and take every deleted one from it, inside the
 * writing transaction, so the `X-Total-Count` of a whole collection is a read
 * of a few tally rows instead of a scan of millions, and it stays exact
 * whatever wrote: this process or another, a cascade, a script, an older
 * version of the service. A remembered count cannot do that under writes: on
 * PostgreSQL with 1,000,000 tasks, ten writes a second took a list of 20 from
 * about 1,300 requests a second to 65, every write sending each waiting list
 * to count the table again.
 *
 * A collection's tally is spread over `Dialect.tallyShards` rows (64 on
 * PostgreSQL, 1 on SQLite, which has one writer anyway). Each write adds to one
 * of them, picked at random, and holds it locked until its transaction
 * commits, so concurrent writers to one collection rarely wait for one
 * another's commit. While nothing changes, the store does not even read the
 * tally: the count is remembered with the change stamp (stamped-cache.ts).
 */
import { CompiledQuery, type Kysely, type Transaction } from 'kysely'
import type { Database, Dialect } from './dialect.js'
import { tallyKept } from './tally-triggers.js'

export const ROW_COUNTS_TABLE = 'resourcery_row_counts'

export async function createRowCountTable (trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  const integer = dialect.columnType('integer')
  await trx.schema.createTable(ROW_COUNTS_TABLE).ifNotExists()
    .addColumn('collection', 'text', column => column.notNull())
    .addColumn('shard', integer, column => column.notNull())
    .addColumn('total', integer, column => column.notNull())
    .addPrimaryKeyConstraint(`${ROW_COUNTS_TABLE}_pkey`, ['collection', 'shard'])
    .execute()
}

/**
 * Starts keeping the count of every collection that has no tally yet, or
 * whose triggers are gone (tally-triggers.ts): its triggers, then its rows
 * counted once, afresh. Inside the migration transaction, which
 * holds off concurrent writers to the table until the tally is in place (the
 * trigger's creation locks the table on PostgreSQL; SQLite has one writer), so
 * no row is counted twice or missed.
 */
export async function countRows (trx: Transaction<Database>, dialect: Dialect, collections: readonly string[]): Promise<string[]> {
  const tallied = new Set((await trx.selectFrom(ROW_COUNTS_TABLE).select('collection').distinct().execute()).map(row => String(row.collection)))
  const triggers = await dialect.triggerNames(trx)
  const untallied = collections.filter(collection => !tallied.has(collection) || !tallyKept(triggers, dialect, collection))
  if (untallied.length === 0) return []
  await dialect.keepRowCounts(trx, untallied)
  for (const collection of untallied) {
    await trx.deleteFrom(ROW_COUNTS_TABLE).where('collection', '=', collection).execute()
    const counted = countValue(await countOf(trx, collection).executeTakeFirst())
    const shards = Array.from({ length: dialect.tallyShards }, (_, shard) => ({ collection, shard, total: shard === 0 ? counted : 0 }))
    await trx.insertInto(ROW_COUNTS_TABLE).values(shards).execute()
  }
  return untallied.map(collection => `count rows of ${collection}`)
}

/** The query that reads a collection's row count: the sum of its tally. */
export function rowCountQuery (db: Kysely<Database>, collection: string): CompiledQuery<{ n: unknown }> {
  return db.selectFrom(ROW_COUNTS_TABLE)
    .select(eb => eb.fn.coalesce(eb.fn.sum<number>('total'), eb.lit(0)).as('n'))
    .where('collection', '=', collection)
    .compile()
}

/** Counts a table's rows (as `n`), the slow way: narrowed by the caller's where clause, if any. */
export function countOf (executor: Kysely<Database>, table: string) {
  return executor.selectFrom(table).select(eb => eb.fn.countAll<number>().as('n'))
}

/** A count as read: PostgreSQL counts into a bigint and sums bigints into a numeric, which pg may hand over as text. */
export const countValue = (row: { n: unknown } | undefined): number => Number(row?.n ?? 0)
