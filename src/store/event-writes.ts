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

export function eventWrites (writer: Writer, templated: QueryTemplates): EventWrites {
  const listeners: Array<() => void> = []
  return {
    async run (job) {
      let enqueued = false
      const result = await writer.run(async w => await job(w, {
        async add (resource, kind, record) {
          const inserted = await w.executeQuery(templated('webhook event', eventValues(resource.collection, kind, record), slots => outboxInsert(w, slots)))
          enqueued = enqueued || (inserted.numAffectedRows ?? 0n) > 0n
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
