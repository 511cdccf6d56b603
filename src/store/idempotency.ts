/**
 * Durable idempotency records: per credential and key, the fingerprint of the
 * first request and, once it finished, its response, kept for a day.
 */
import type { Kysely, Transaction } from 'kysely'
import type { Database, Dialect } from './dialect.js'

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

export type Claim = { readonly claimed: true } | { readonly claimed: false, readonly existing: IdempotencyRecord }

export interface IdempotencyStore {
  /** Records the key as running, or returns what is already recorded under it. */
  claim (subject: string, key: string, fingerprint: string, options: { now: Date, expiresAt: Date, staleBefore: Date }): Promise<Claim>
  complete (subject: string, key: string, response: StoredResponse): Promise<void>
  /** Forgets a key whose request failed on the server's side, so a retry runs again. */
  release (subject: string, key: string): Promise<void>
  /** Deletes expired records; returns how many. */
  purge (now: Date): Promise<number>
}

export async function createIdempotencyTable (trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  await trx.schema.createTable(IDEMPOTENCY_TABLE).ifNotExists()
    .addColumn('subject', 'text', column => column.notNull())
    .addColumn('key', 'text', column => column.notNull())
    .addColumn('fingerprint', 'text', column => column.notNull())
    .addColumn('response', 'text')
    .addColumn('createdAt', dialect.columnType('timestamp'), column => column.notNull())
    .addColumn('expiresAt', dialect.columnType('timestamp'), column => column.notNull())
    .addPrimaryKeyConstraint(`${IDEMPOTENCY_TABLE}_pkey`, ['subject', 'key'])
    .execute()
  await trx.schema.createIndex(`${IDEMPOTENCY_TABLE}_expires_idx`).ifNotExists().on(IDEMPOTENCY_TABLE).column('expiresAt').execute()
}

export function idempotencyStore (db: Kysely<Database>): IdempotencyStore {
  const find = (subject: string, key: string) =>
    db.selectFrom(IDEMPOTENCY_TABLE).selectAll().where('subject', '=', subject).where('key', '=', key).executeTakeFirst()

  return {
    async claim (subject, key, fingerprint, { now, expiresAt, staleBefore }) {
      // An expired record, or one left running by a process that died, no longer holds the key.
      await db.deleteFrom(IDEMPOTENCY_TABLE).where('subject', '=', subject).where('key', '=', key)
        .where(eb => eb.or([eb('expiresAt', '<=', now.toISOString()), eb.and([eb('response', 'is', null), eb('createdAt', '<', staleBefore.toISOString())])]))
        .execute()
      const inserted = await db.insertInto(IDEMPOTENCY_TABLE)
        .values({ subject, key, fingerprint, response: null, createdAt: now.toISOString(), expiresAt: expiresAt.toISOString() })
        .onConflict(conflict => conflict.columns(['subject', 'key']).doNothing())
        .executeTakeFirst()
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { claimed: true }
      const row = await find(subject, key)
      if (row === undefined) return await this.claim(subject, key, fingerprint, { now, expiresAt, staleBefore })
      const response = row.response === null ? undefined : JSON.parse(String(row.response)) as StoredResponse
      return { claimed: false, existing: { fingerprint: String(row.fingerprint), createdAt: String(row.createdAt), ...(response === undefined ? {} : { response }) } }
    },
    async complete (subject, key, response) {
      await db.updateTable(IDEMPOTENCY_TABLE).set({ response: JSON.stringify(response) }).where('subject', '=', subject).where('key', '=', key).execute()
    },
    async release (subject, key) {
      await db.deleteFrom(IDEMPOTENCY_TABLE).where('subject', '=', subject).where('key', '=', key).execute()
    },
    async purge (now) {
      const result = await db.deleteFrom(IDEMPOTENCY_TABLE).where('expiresAt', '<=', now.toISOString()).executeTakeFirst()
      return Number(result.numDeletedRows)
    }
  }
}
