/**
 * On PostgreSQL, where every statement is a round trip, the Idempotency-Key
 * claims of one turn of the event loop are one statement, and so are the
 * refusals' answers it stores (write-batches.ts says when, and what happens
 * when one fails): each column's values for all the keys as one array
 * parameter, unnested, one statement text each, prepared once.
 *
 * - Claims: `insert … select … from unnest(…) on conflict do nothing
 *   returning subject, key`: a key returned is claimed; one already there is
 *   not, and its claim goes on as a claim alone would (idempotency.ts).
 *   No key is claimed twice in one statement. A claim commits without
 *   waiting for the WAL flush (synchronous_commit off, for its own
 *   transaction only): nothing is answered on a claim alone but "still
 *   running" (409), and whatever its request then commits waits for a flush
 *   that takes the claim with it, as PostgreSQL writes its log in order.
 *   Lost in a crash, it was a claim of a request that made nothing, and the
 *   retry claims the key anew. Waiting for a flush of its own made every
 *   keyed create wait for two.
 * - Refusals' answers: `update … set response = … from unnest(subjects,
 *   keys, responses)`, each of a key this process holds.
 */
import { sql, type Kysely } from 'kysely'
import type { Database, Dialect } from './dialect.js'
import { IDEMPOTENCY_TABLE } from './idempotency.js'
import { rawStatement, type QueryTemplates } from './query-templates.js'
import type { ColumnKind } from './tables.js'
import { columnsOf, unnestedRows } from './unnested-rows.js'
import { writeBatches } from './write-batches.js'

export interface IdempotencyBatches {
  /**
   * Claims a key (`[subject, key, fingerprint, createdAt, expiresAt]`) with
   * the turn's other new keys: whether this statement made its record.
   */
  claim (values: readonly unknown[]): Promise<boolean>
  /** Stores a refusal's answer (`[subject, key, response]`) with the turn's others: a create's record is its own answer. */
  complete (values: readonly unknown[], alone: () => Promise<void>): Promise<void>
}

const CLAIMED = ['subject', 'key', 'fingerprint', 'createdAt', 'expiresAt'] as const
const CLAIM_KINDS: readonly ColumnKind[] = ['string', 'string', 'string', 'timestamp', 'timestamp']
const COMPLETED = ['subject', 'key', 'response'] as const
/** The unnested rows' alias, a name no column has. */
const ROWS = 'keys'

/** Where the dialect gathers a turn's writes (PostgreSQL); undefined where the writer commits them together anyway (SQLite). */
export function idempotencyBatches (dialect: Dialect, templated: QueryTemplates): IdempotencyBatches | undefined {
  const { manyRows } = dialect
  if (manyRows === undefined || dialect.writesOneAtATime) return undefined
  const db: Kysely<Database> = dialect.db
  const { undone } = manyRows
  const { of: ofRows, from: unnested } = unnestedRows(manyRows.array, ROWS)
  // Two claims (or stored answers) of one key never share a statement: both would be answered by its one row.
  const keyOf = ([subject, key]: readonly unknown[]): string => `${String(subject)}\n${String(key)}`

  /** Claims each of `rows` (alone too: then as a batch of one), committing without waiting for the flush: whether each was claimed. */
  async function claimMany (rows: ReadonlyArray<readonly unknown[]>): Promise<boolean[]> {
    const query = templated('claim many idempotency keys', columnsOf(rows, CLAIMED.length), slots => rawStatement(db, sql`with unflushed as (select set_config('synchronous_commit', 'off', true))
      insert into ${sql.table(IDEMPOTENCY_TABLE)} (${sql.join(CLAIMED.map(column => sql.id(column)))})
      select ${sql.join(CLAIMED.map(ofRows))} from ${unnested(CLAIM_KINDS, slots, CLAIMED)} cross join unflushed
      on conflict (subject, key) do nothing returning subject, key`))
    const claimed = new Set((await db.executeQuery<{ subject: string, key: string }>(query)).rows.map(row => keyOf([row.subject, row.key])))
    return rows.map(values => claimed.has(keyOf(values)))
  }
  const claims = writeBatches<'claims', boolean>({ undone, distinct: keyOf, writeMany: async (_, rows) => await claimMany(rows) })

  const completes = writeBatches<'completes', true>({
    undone,
    distinct: keyOf,
    async writeMany (_, rows) {
      const query = templated('complete many idempotency keys', columnsOf(rows, COMPLETED.length), slots => rawStatement(db, sql`update ${sql.table(IDEMPOTENCY_TABLE)}
        set response = ${ofRows('response')} from ${unnested(['string', 'string', 'string'], slots, COMPLETED)}
        where ${sql.ref(`${IDEMPOTENCY_TABLE}.subject`)} = ${ofRows('subject')} and ${sql.ref(`${IDEMPOTENCY_TABLE}.key`)} = ${ofRows('key')}`))
      await db.executeQuery(query)
      return rows.map(() => true as const)
    }
  })

  return {
    claim: async values => await claims.write('claims', values, async () => (await claimMany([values]))[0]) === true,
    async complete (values, alone) {
      await completes.write('completes', values, async () => { await alone(); return true })
    }
  }
}
