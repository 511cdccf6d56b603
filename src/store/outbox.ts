/**
 * The outbox: each write's event is added inside the write's own transaction,
 * so an event exists exactly when its write committed.
 */
import { randomUUID } from 'node:crypto'
import { sql, type Compilable, type Expression, type Kysely, type SqlBool } from 'kysely'
import type { Database } from './dialect.js'
import { rawStatement } from './query-templates.js'
import { EVENTS_TABLE, WEBHOOKS_TABLE } from './webhook-tables.js'

export type EventKind = 'created' | 'updated' | 'deleted'

/** The outbox's columns that `eventValues` gives, in its order (all text). */
export const EVENT_COLUMNS = ['id', 'type', 'collection', 'record', 'createdAt'] as const

/** The values of the outbox row for one write: id, type, collection, record, createdAt. */
export function eventValues (collection: string, kind: EventKind, record: unknown): unknown[] {
  return [`msg_${randomUUID().replace(/-/g, '')}`, `${collection}.${kind}`, collection, JSON.stringify(record), new Date().toISOString()]
}

/** Whether some subscription is active, as a condition inside a statement: read with the statement's own snapshot. */
export const activeSubscription = sql<SqlBool>`exists (select 1 from ${sql.table(WEBHOOKS_TABLE)} where ${sql.ref('disabledAt')} is null)`

/**
 * The condition that makes a write statement change nothing while some
 * subscription is active: a write that carries it needs no event (event-writes.ts).
 */
export const noActiveSubscription: Expression<SqlBool> = sql<SqlBool>`not ${activeSubscription}`

/**
 * The outbox row for one write, added inside that write's transaction, and
 * only while some subscription is active: one statement either way (compiled
 * once by the caller), so a service without webhooks pays almost nothing.
 */
export function outboxInsert (executor: Kysely<Database>, values: readonly unknown[]): Compilable {
  const statement = sql`insert into ${sql.table(EVENTS_TABLE)} (${sql.join(EVENT_COLUMNS.map(column => sql.id(column)))}, ${sql.ref('fannedOut')})
    select ${sql.join(values.map(value => sql`${value}`))}, 0
    where ${activeSubscription}`
  return rawStatement(executor, statement)
}

/** Rows per outbox insert of many events: 6 values each, far under every driver's bound-parameter limit. */
const EVENTS_PER_INSERT = 200

/** Whether some subscription is active: inside a write's transaction, whether its events are wanted. */
export async function anySubscription (executor: Kysely<Database>): Promise<boolean> {
  return await executor.selectFrom(WEBHOOKS_TABLE).select('id').where('disabledAt', 'is', null).limit(1).executeTakeFirst() !== undefined
}

/** Outbox rows for many records of one collection at once (a cascade), once `anySubscription` said they are wanted. */
export async function addEvents (executor: Kysely<Database>, collection: string, kind: EventKind, records: readonly unknown[]): Promise<void> {
  for (let i = 0; i < records.length; i += EVENTS_PER_INSERT) {
    const rows = records.slice(i, i + EVENTS_PER_INSERT).map(record => {
      const [id, type, , data, createdAt] = eventValues(collection, kind, record)
      return { id, type, collection, record: data, createdAt, fannedOut: 0 }
    })
    await executor.insertInto(EVENTS_TABLE).values(rows).execute()
  }
}
