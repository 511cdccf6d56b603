/**
 * The webhook tables: subscriptions, the outbox of events, one delivery per
 * event and subscription, and every attempt at a delivery. Timestamps are ISO
 * strings, which order as text the way they order in time, on every dialect.
 */
import type { Transaction } from 'kysely'
import type { Database, Dialect } from './dialect.js'

export const WEBHOOKS_TABLE = 'resourcery_webhooks'
export const EVENTS_TABLE = 'resourcery_webhook_events'
export const DELIVERIES_TABLE = 'resourcery_webhook_deliveries'
export const ATTEMPTS_TABLE = 'resourcery_webhook_attempts'

export async function createWebhookTables (trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  const id = dialect.columnType('id')
  const integer = dialect.columnType('integer')
  await trx.schema.createTable(WEBHOOKS_TABLE).ifNotExists()
    .addColumn('id', id, column => dialect.idColumn(column))
    .addColumn('url', 'text', column => column.notNull())
    .addColumn('events', 'text', column => column.notNull())
    .addColumn('secret', 'text', column => column.notNull())
    .addColumn('createdAt', 'text', column => column.notNull())
    .addColumn('disabledAt', 'text')
    .addColumn('disabledReason', 'text')
    .execute()
  await trx.schema.createTable(EVENTS_TABLE).ifNotExists()
    .addColumn('id', 'text', column => column.primaryKey())
    .addColumn('type', 'text', column => column.notNull())
    .addColumn('collection', 'text', column => column.notNull())
    .addColumn('record', 'text', column => column.notNull())
    .addColumn('createdAt', 'text', column => column.notNull())
    .addColumn('fannedOut', integer, column => column.notNull().defaultTo(0))
    .execute()
  await trx.schema.createIndex(`${EVENTS_TABLE}_pending_idx`).ifNotExists().on(EVENTS_TABLE).columns(['fannedOut', 'createdAt']).execute()
  await trx.schema.createTable(DELIVERIES_TABLE).ifNotExists()
    .addColumn('id', id, column => dialect.idColumn(column))
    .addColumn('webhookId', integer, column => column.notNull())
    .addColumn('eventId', 'text', column => column.notNull())
    .addColumn('status', 'text', column => column.notNull())
    .addColumn('attempts', integer, column => column.notNull().defaultTo(0))
    .addColumn('nextAttemptAt', 'text', column => column.notNull())
    .addColumn('lockedUntil', 'text')
    .addColumn('createdAt', 'text', column => column.notNull())
    .execute()
  await trx.schema.createIndex(`${DELIVERIES_TABLE}_due_idx`).ifNotExists().on(DELIVERIES_TABLE).columns(['status', 'nextAttemptAt']).execute()
  await trx.schema.createTable(ATTEMPTS_TABLE).ifNotExists()
    .addColumn('id', id, column => dialect.idColumn(column))
    .addColumn('webhookId', integer, column => column.notNull())
    .addColumn('deliveryId', integer, column => column.notNull())
    .addColumn('eventId', 'text', column => column.notNull())
    .addColumn('eventType', 'text', column => column.notNull())
    .addColumn('attempt', integer, column => column.notNull())
    .addColumn('attemptedAt', 'text', column => column.notNull())
    .addColumn('durationMs', integer, column => column.notNull())
    .addColumn('responseStatus', integer)
    .addColumn('error', 'text')
    .addColumn('outcome', 'text', column => column.notNull())
    .addColumn('nextAttemptAt', 'text')
    .execute()
  await trx.schema.createIndex(`${ATTEMPTS_TABLE}_webhook_idx`).ifNotExists().on(ATTEMPTS_TABLE).columns(['webhookId', 'id']).execute()
}
