/**
 * Durable idempotency records: per credential and key, the fingerprint of the
 * first request and what it came to, kept for a day. A create marks the
 * record with what it created, in the create's own transaction: from its
 * commit on, a retry answers with that record, as the create answered, and
 * nothing is stored after it. Any other answer (a refusal) is stored once it
 * is made, and replayed.
 */
import type { Kysely, Transaction } from 'kysely'
import type { Database, Dialect } from './dialect.js'
import type { IdempotencyBatches } from './idempotency-batches.js'
import type { QueryTemplates } from './query-templates.js'
import type { StoredRecord } from './store.js'

export const IDEMPOTENCY_TABLE = 'resourcery_idempotency'

export interface StoredResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface IdempotencyRecord {
  readonly fingerprint: string
  /** Absent while the first request is still running. */
  readonly response?: StoredResponse
  readonly createdAt: string
}

/** Whose key a request holds, and since when: a create marks the record only while the claim is still its own. */
export interface HeldKey {
  readonly subject: string
  readonly key: string
  readonly claimedAt: string
}

export type Claim =
  /** `committed`: the record the key's create made; the request answers with it, creating nothing. */
  | { readonly claimed: true, readonly held: HeldKey, readonly committed?: StoredRecord }
  | { readonly claimed: false, readonly existing: IdempotencyRecord }

export interface IdempotencyStore {
  /** Records the key as running, or returns what is already recorded under it. */
  claim (subject: string, key: string, fingerprint: string, options: { now: Date, expiresAt: Date, staleBefore: Date }): Promise<Claim>
  /** Stores the answer of a request under the key that created nothing (a refusal), for its retries. */
  complete (subject: string, key: string, response: StoredResponse): Promise<void>
  /** Forgets a key whose request failed on the server's side before creating anything, so a retry runs again. */
  release (subject: string, key: string): Promise<void>
  /** Deletes expired records; returns how many. */
  purge (now: Date): Promise<number>
}

/** Rows a statement changed, as Kysely reports them for a compiled query. */
const changed = (result: { numAffectedRows?: bigint }): number => Number(result.numAffectedRows ?? 0n)

/**
 * Marks a held key with the record its request created, inside the create's
 * transaction. False when the key is no longer held (a retry took it over
 * after the request ran past the stale limit): the create must then not commit.
 * Its statement, like a claim's, is built once (query-templates.ts): built for
 * each keyed create, the two cost about a twentieth of its CPU.
 */
export async function markCreated (executor: Kysely<Database>, templated: QueryTemplates, held: HeldKey, record: StoredRecord): Promise<boolean> {
  const query = templated('mark idempotency key', [JSON.stringify(record), held.subject, held.key, held.claimedAt], ([committed, subject, key, claimedAt]) =>
    executor.updateTable(IDEMPOTENCY_TABLE).set({ committed })
      .where('subject', '=', subject).where('key', '=', key).where('createdAt', '=', claimedAt).where('response', 'is', null))
  return changed(await executor.executeQuery(query)) > 0
}

export async function createIdempotencyTable (trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  await trx.schema.createTable(IDEMPOTENCY_TABLE).ifNotExists()
    .addColumn('subject', 'text', column => column.notNull())
    .addColumn('key', 'text', column => column.notNull())
    .addColumn('fingerprint', 'text', column => column.notNull())
    .addColumn('response', 'text')
    .addColumn('committed', 'text')
    .addColumn('createdAt', dialect.columnType('timestamp'), column => column.notNull())
    .addColumn('expiresAt', dialect.columnType('timestamp'), column => column.notNull())
    .addPrimaryKeyConstraint(`${IDEMPOTENCY_TABLE}_pkey`, ['subject', 'key'])
    .execute()
  // Tables made before creates marked their records lack the column.
  const columns = (await dialect.columns(trx)).get(IDEMPOTENCY_TABLE) ?? []
  if (!columns.some(column => column.name === 'committed')) await trx.schema.alterTable(IDEMPOTENCY_TABLE).addColumn('committed', 'text').execute()
  await trx.schema.createIndex(`${IDEMPOTENCY_TABLE}_expires_idx`).ifNotExists().on(IDEMPOTENCY_TABLE).column('expiresAt').execute()
}

/** When a claim is made, until when its record is kept, and before when a record left running is a dead request's. */
type ClaimTimes = Parameters<IdempotencyStore['claim']>[3]

/** Runs a job of writes: in the writer's group commit (SQLite), or each statement committing by itself (PostgreSQL). */
export type WriteRunner = <T>(job: (executor: Kysely<Database>) => Promise<T>) => Promise<T>

/**
 * `write` runs the claims, stored refusals and releases. On SQLite that is
 * the writer's group commit, so that they share a commit, and its fsync,
 * with the turn's other writes, each settling once on disk: committing
 * alone, each paid an fsync of its own, and 50 clients POSTing with a new
 * key each got a tenth of the creates a second they got without one. On
 * PostgreSQL, `batches` makes a turn's new claims one statement, and the
 * refusals it stores another (idempotency-batches.ts).
 */
export function idempotencyStore (db: Kysely<Database>, write: WriteRunner, templated: QueryTemplates, batches?: IdempotencyBatches): IdempotencyStore {
  const find = (executor: Kysely<Database>, subject: string, key: string) =>
    executor.selectFrom(IDEMPOTENCY_TABLE).selectAll().where('subject', '=', subject).where('key', '=', key).executeTakeFirst()

  /** Records a new key (`[subject, key, fingerprint, createdAt, expiresAt]`) on `w`, unless it is there: whether it did. */
  const insertClaim = async (w: Kysely<Database>, values: readonly unknown[]): Promise<boolean> => changed(await w.executeQuery(templated('claim idempotency key', values,
    ([subject, key, fingerprint, createdAt, expiresAt]) => w.insertInto(IDEMPOTENCY_TABLE)
      .values({ subject, key, fingerprint, response: null, committed: null, createdAt, expiresAt })
      .onConflict(conflict => conflict.columns(['subject', 'key']).doNothing())))) > 0

  async function claimOn (w: Kysely<Database>, subject: string, key: string, fingerprint: string, times: ClaimTimes): Promise<Claim> {
    const { now, expiresAt, staleBefore } = times
    const again = async (): Promise<Claim> => await claimOn(w, subject, key, fingerprint, times)
    const claimedAt = now.toISOString()
    const values = [subject, key, fingerprint, claimedAt, expiresAt.toISOString()]
    const inserted = batches === undefined ? await insertClaim(w, values) : await batches.claim(values)
    // A new key (the usual case) is claimed by that one statement.
    if (inserted) return { claimed: true, held: { subject, key, claimedAt } }
    const row = await find(w, subject, key)
    if (row === undefined) return await again()
    // An expired record, or one left running by a process that died before it created anything, no longer holds the key.
    const lapsed = await w.deleteFrom(IDEMPOTENCY_TABLE).where('subject', '=', subject).where('key', '=', key)
      .where(eb => eb.or([
        eb('expiresAt', '<=', claimedAt),
        eb.and([eb('response', 'is', null), eb('committed', 'is', null), eb('createdAt', '<', staleBefore.toISOString())])
      ]))
      .executeTakeFirst()
    if (Number(lapsed.numDeletedRows) > 0) return await again()
    const response = row.response === null ? undefined : JSON.parse(String(row.response)) as StoredResponse
    // SQLite answers timestamps as the ISO text stored; PostgreSQL as ISO text or as Dates (postgres.ts, timestampFromText).
    const since = new Date(row.createdAt as string | Date)
    const existing = { fingerprint: String(row.fingerprint), createdAt: since.toISOString(), ...(response === undefined ? {} : { response }) }
    // Its create committed, whether or not its request lived to answer: the record answers the retry.
    const created = response === undefined && row.committed !== null
    if (!created || existing.fingerprint !== fingerprint) return { claimed: false, existing }
    return { claimed: true, held: { subject, key, claimedAt: existing.createdAt }, committed: JSON.parse(String(row.committed)) as StoredRecord }
  }

  return {
    claim: async (subject, key, fingerprint, options) => await write(async w => await claimOn(w, subject, key, fingerprint, options)),
    async complete (subject, key, response) {
      const stored = JSON.stringify(response)
      const alone = async (): Promise<void> => {
        await write(async w => await w.executeQuery(templated('store idempotent answer', [stored, subject, key], ([response, subject, key]) =>
          w.updateTable(IDEMPOTENCY_TABLE).set({ response }).where('subject', '=', subject).where('key', '=', key))))
      }
      await (batches === undefined ? alone() : batches.complete([subject, key, stored], alone))
    },
    async release (subject, key) {
      // A key whose create committed stays held: once stale, a retry answers with that record instead of creating another.
      await write(async w => await w.deleteFrom(IDEMPOTENCY_TABLE).where('subject', '=', subject).where('key', '=', key).where('committed', 'is', null).execute())
    },
    async purge (now) {
      const result = await db.deleteFrom(IDEMPOTENCY_TABLE).where('expiresAt', '<=', now.toISOString()).executeTakeFirst()
      return Number(result.numDeletedRows)
    }
  }
}
