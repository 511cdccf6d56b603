/**
 * Store writes run on the writer with their events: each event goes to the
 * outbox inside the write's own transaction, and once that has committed the
 * dispatcher is told, if some subscription may want it.
 */
import type { Kysely } from 'kysely'
import type { Resource } from '../resources/model.js'
import type { Database } from './dialect.js'
import type { Writer } from './group-commit.js'
import { addEvents, eventValues, outboxInsert, type EventKind } from './outbox.js'
import type { QueryTemplates } from './query-templates.js'

export interface Outbox {
  /** Adds the event of one write, if some subscription is active (one statement either way). */
  add: (resource: Resource, kind: EventKind, record: unknown) => Promise<void>
  /** Adds the events of many records of one collection, once `anySubscription` said they are wanted. */
  addAll: (collection: string, kind: EventKind, records: readonly unknown[]) => Promise<void>
}

export interface EventWrites {
  run: <T>(job: (w: Kysely<Database>, outbox: Outbox) => Promise<T>) => Promise<T>
  /** `listener` is called after each commit that enqueued events. */
  onEnqueued: (listener: () => void) => void
}

/**
 * Transactions whose outbox insert found no active subscription. Their later
 * writes (a SQLite group commits many in one transaction) skip theirs, a
 * statement and an event built for nothing: no subscription can appear inside
 * one. This process creates subscriptions outside any transaction (the
 * connection is held by one at a time), and no other process can commit
 * while the transaction holds the write lock it took with the write before
 * its event. (On PostgreSQL each write has a transaction of its own.)
 */
const withoutSubscriptions = new WeakSet<Kysely<Database>>()

export function eventWrites (writer: Writer, templated: QueryTemplates): EventWrites {
  const listeners: Array<() => void> = []
  return {
    async run (job) {
      let enqueued = false
      const result = await writer.run(async w => await job(w, {
        async add (resource, kind, record) {
          if (withoutSubscriptions.has(w)) return
          const inserted = await w.executeQuery(templated('webhook event', eventValues(resource.collection, kind, record), slots => outboxInsert(w, slots)))
          if ((inserted.numAffectedRows ?? 0n) > 0n) enqueued = true
          else withoutSubscriptions.add(w)
        },
        async addAll (collection, kind, records) {
          await addEvents(w, collection, kind, records)
          enqueued = enqueued || records.length > 0
        }
      }))
      if (enqueued) for (const listener of listeners) listener()
      return result
    },
    onEnqueued (listener) { listeners.push(listener) }
  }
}
