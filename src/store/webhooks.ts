/**
 * The webhook store in SQL (its contract is webhook-store.ts): subscriptions,
 * the fan-out of outbox events into deliveries, claiming due deliveries, and
 * the record of every attempt.
 */
import type { ExpressionBuilder } from 'kysely'
import type { Database } from './dialect.js'
import { liveItems } from './live-items.js'
import { ATTEMPTS_TABLE, DELIVERIES_TABLE, EVENTS_TABLE, WEBHOOKS_TABLE } from './webhook-tables.js'
import type { Writer } from './group-commit.js'
import type { AttemptRecord, DueDelivery, Subscription, WebhookStore } from './webhook-store.js'

type Row = Record<string, unknown>

const present = <K extends string>(key: K, value: unknown): Partial<Record<K, string>> =>
  value === null || value === undefined ? {} : { [key]: String(value) } as Record<K, string>

function subscriptionOf (row: Row): Subscription {
  return {
    id: Number(row.id),
    url: String(row.url),
    events: JSON.parse(String(row.events)) as string[],
    secret: String(row.secret),
    createdAt: String(row.createdAt),
    ...present('disabledAt', row.disabledAt),
    ...present('disabledReason', row.disabledReason)
  }
}

function attemptOf (row: Row): AttemptRecord {
  return {
    id: Number(row.id),
    webhookId: Number(row.webhookId),
    deliveryId: Number(row.deliveryId),
    eventId: String(row.eventId),
    eventType: String(row.eventType),
    attempt: Number(row.attempt),
    attemptedAt: String(row.attemptedAt),
    durationMs: Number(row.durationMs),
    ...(row.responseStatus === null || row.responseStatus === undefined ? {} : { responseStatus: Number(row.responseStatus) }),
    ...present('error', row.error),
    outcome: row.outcome as AttemptRecord['outcome'],
    ...present('nextAttemptAt', row.nextAttemptAt)
  }
}

/** Rows per insert of new deliveries: 6 values each, far under every driver's bound-parameter limit. */
const DELIVERIES_PER_INSERT = 1000

export function webhookStore (writer: Writer): WebhookStore {
  const { db } = writer
  /** Deliveries no process holds: never claimed, or their claim's lock ran out. */
  const unlocked = (now: string) => (eb: ExpressionBuilder<Database, string>) => eb.or([eb('lockedUntil', 'is', null), eb('lockedUntil', '<', now)])
  return {
    async create (subscription) {
      const row = await db.insertInto(WEBHOOKS_TABLE)
        .values({ url: subscription.url, events: JSON.stringify(subscription.events), secret: subscription.secret, createdAt: new Date().toISOString() })
        .returningAll().executeTakeFirstOrThrow()
      return subscriptionOf(row)
    },

    subscriptions: liveItems(db, WEBHOOKS_TABLE, subscriptionOf, false),

    async remove (id) {
      return await writer.run(async w => {
        const result = await w.deleteFrom(WEBHOOKS_TABLE).where('id', '=', id).executeTakeFirst()
        await w.deleteFrom(DELIVERIES_TABLE).where('webhookId', '=', id).where('status', '=', 'pending').execute()
        return (result.numDeletedRows ?? 0n) > 0n
      })
    },

    async fanOut (matches, limit) {
      return await writer.run(async w => {
        const events = await w.selectFrom(EVENTS_TABLE).selectAll().where('fannedOut', '=', 0).orderBy('createdAt').limit(limit).execute()
        if (events.length === 0) return 0
        const subscriptions = (await w.selectFrom(WEBHOOKS_TABLE).selectAll().where('disabledAt', 'is', null).execute()).map(subscriptionOf)
        // Claimed by one conditional update, so two processes never fan out the same event.
        const claimed = new Set((await w.updateTable(EVENTS_TABLE).set({ fannedOut: 1 })
          .where('id', 'in', events.map(event => event.id)).where('fannedOut', '=', 0)
          .returning('id').execute()).map(row => String(row.id)))
        const now = new Date().toISOString()
        const deliveries = []
        const unwanted = []
        for (const event of events.filter(candidate => claimed.has(String(candidate.id)))) {
          const targets = subscriptions.filter(subscription => matches(subscription, String(event.type)))
          if (targets.length === 0) unwanted.push(event.id)
          for (const subscription of targets) deliveries.push({ webhookId: subscription.id, eventId: event.id, status: 'pending', attempts: 0, nextAttemptAt: now, createdAt: now })
        }
        if (unwanted.length > 0) await w.deleteFrom(EVENTS_TABLE).where('id', 'in', unwanted).execute()
        // In slices: many events times many subscriptions would pass SQLite's limit on bound values.
        for (let i = 0; i < deliveries.length; i += DELIVERIES_PER_INSERT) await w.insertInto(DELIVERIES_TABLE).values(deliveries.slice(i, i + DELIVERIES_PER_INSERT)).execute()
        return events.length
      })
    },

    async claimDue (now, lockedUntil, limit) {
      return await writer.run(async w => {
        const due = await w.selectFrom(DELIVERIES_TABLE).selectAll()
          .where('status', '=', 'pending').where('nextAttemptAt', '<=', now).where(unlocked(now))
          .orderBy('nextAttemptAt').limit(limit).execute()
        if (due.length === 0) return []
        // One conditional update claims them all; another process may have taken some since the select.
        const taken = await w.updateTable(DELIVERIES_TABLE).set({ lockedUntil })
          .where('id', 'in', due.map(delivery => delivery.id)).where('status', '=', 'pending').where(unlocked(now))
          .returning('id').execute()
        if (taken.length === 0) return []
        const ours = new Set(taken.map(row => Number(row.id)))
        const claimedRows = due.filter(delivery => ours.has(Number(delivery.id)))
        const byId = async (table: string, ids: unknown[]): Promise<Map<string, Row>> =>
          new Map((await w.selectFrom(table).selectAll().where('id', 'in', [...new Set(ids)]).execute()).map(row => [String(row.id), row]))
        const subscriptions = await byId(WEBHOOKS_TABLE, claimedRows.map(delivery => delivery.webhookId))
        const events = await byId(EVENTS_TABLE, claimedRows.map(delivery => delivery.eventId))
        const claimed: DueDelivery[] = []
        for (const delivery of claimedRows) {
          const subscription = subscriptions.get(String(delivery.webhookId))
          const event = events.get(String(delivery.eventId))
          if (subscription === undefined || event === undefined) continue
          claimed.push({
            id: Number(delivery.id),
            attempts: Number(delivery.attempts),
            createdAt: String(delivery.createdAt),
            subscription: subscriptionOf(subscription),
            event: { id: String(event.id), type: String(event.type), collection: String(event.collection), record: String(event.record), createdAt: String(event.createdAt) }
          })
        }
        return claimed
      })
    },

    async recordAttempt (delivery, result, disable) {
      await writer.run(async w => {
        const attempt = delivery.attempts + 1
        await w.insertInto(ATTEMPTS_TABLE).values({
          webhookId: delivery.subscription.id,
          deliveryId: delivery.id,
          eventId: delivery.event.id,
          eventType: delivery.event.type,
          attempt,
          attemptedAt: result.attemptedAt,
          durationMs: result.durationMs,
          responseStatus: result.responseStatus ?? null,
          error: result.error ?? null,
          outcome: result.outcome,
          nextAttemptAt: result.nextAttemptAt ?? null
        }).execute()
        await w.updateTable(DELIVERIES_TABLE).set({
          attempts: attempt,
          status: result.outcome === 'retrying' ? 'pending' : result.outcome,
          nextAttemptAt: result.nextAttemptAt ?? result.attemptedAt,
          lockedUntil: null
        }).where('id', '=', delivery.id).execute()
        if (disable !== undefined) {
          await w.updateTable(WEBHOOKS_TABLE).set({ disabledAt: result.attemptedAt, disabledReason: disable })
            .where('id', '=', delivery.subscription.id).where('disabledAt', 'is', null).execute()
          await w.updateTable(DELIVERIES_TABLE).set({ status: 'failed' })
            .where('webhookId', '=', delivery.subscription.id).where('status', '=', 'pending').execute()
        }
      })
    },

    async purge (before) {
      return await writer.run(async w => {
        const attempts = await w.deleteFrom(ATTEMPTS_TABLE).where('attemptedAt', '<', before).executeTakeFirst()
        await w.deleteFrom(DELIVERIES_TABLE).where('status', '!=', 'pending').where('nextAttemptAt', '<', before).execute()
        await w.deleteFrom(EVENTS_TABLE).where('fannedOut', '=', 1).where('createdAt', '<', before)
          .where(eb => eb.not(eb.exists(eb.selectFrom(DELIVERIES_TABLE).select('id').whereRef(`${DELIVERIES_TABLE}.eventId`, '=', `${EVENTS_TABLE}.id`))))
          .execute()
        return Number(attempts.numDeletedRows ?? 0n)
      })
    },

    async resend (webhookId, eventId, now, withhold = false) {
      return await writer.run(async w => {
        const subscription = await w.selectFrom(WEBHOOKS_TABLE).select('disabledAt').where('id', '=', webhookId).executeTakeFirst()
        const delivery = await w.selectFrom(DELIVERIES_TABLE).select(['id', 'status', 'nextAttemptAt']).where('webhookId', '=', webhookId).where('eventId', '=', eventId).executeTakeFirst()
        if (subscription === undefined || delivery === undefined) return { scheduled: false, reason: 'missing' }
        if (subscription.disabledAt !== null) return { scheduled: false, reason: 'disabled' }
        if (delivery.status === 'pending') return { scheduled: false, reason: 'pending', nextAttemptAt: String(delivery.nextAttemptAt) }
        if (withhold) return { scheduled: false, reason: 'withheld' }
        await w.updateTable(DELIVERIES_TABLE).set({ status: 'pending', nextAttemptAt: now, lockedUntil: null }).where('id', '=', delivery.id).execute()
        return { scheduled: true }
      })
    },

    async attempts (webhookId, limit, before) {
      let query = db.selectFrom(ATTEMPTS_TABLE).selectAll().where('webhookId', '=', webhookId)
      if (before !== undefined) query = query.where('id', '<', before)
      return (await query.orderBy('id', 'desc').limit(limit).execute()).map(attemptOf)
    }
  }
}
