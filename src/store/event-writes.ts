/**
 * Store writes run on the writer with their events: each event goes to the
 * outbox inside the write's own transaction, and once that has committed the
 * dispatcher is told, if some subscription may want it.
 *
 * Where writes interleave and each already has a transaction of its own
 * (PostgreSQL), a write first runs alone: its one write statement commits by
 * itself and carries a condition that it changes nothing while some
 * subscription is active. Without webhooks (the common case) a PATCH is then
 * two round trips (read, write) instead of five (begin, read, write, outbox,
 * commit), and a POST one instead of four. When the statement changed nothing
 * (a subscription is active, or the record changed since it was read), the
 * write runs again in a transaction, with its event; and while subscriptions
 * stay active, writes go straight there.
 */
import type { Expression, Kysely, SqlBool } from 'kysely'
import type { Resource } from '../resources/model.js'
import type { Database } from './dialect.js'
import type { Writer } from './group-commit.js'
import { addEvents, anySubscription, eventValues, noActiveSubscription, outboxInsert, type EventKind } from './outbox.js'
import type { QueryTemplates } from './query-templates.js'

/**
 * What a job that ran alone answers when its write statement changed nothing:
 * a subscription may be active, or the record changed since it was read. The
 * job runs again in a transaction, which tells the two apart.
 */
export const NEEDS_TRANSACTION = Symbol('run the write again in a transaction')

export interface Outbox {
  /** Adds the event of one write, if some subscription is active (one statement either way). */
  add: (resource: Resource, kind: EventKind, record: unknown) => Promise<void>
  /** Adds the events of many records of one collection at once, once `wanted` said they are. */
  addAll: (collection: string, kind: EventKind, records: readonly unknown[]) => Promise<void>
  /** Whether events are wanted: some subscription is active (never, for a job running alone). */
  wanted: () => Promise<boolean>
  /**
   * Set when the job runs alone, each statement committing as it runs. The
   * job then sends exactly one write statement, carrying this condition (it
   * changes nothing while some subscription is active, so what it does
   * change needs no event), and answers NEEDS_TRANSACTION if that changed
   * nothing. `add`, `addAll` and `wanted` have nothing to do then.
   */
  readonly unwatched?: Expression<SqlBool>
}

export type WriteJob<T> = (w: Kysely<Database>, outbox: Outbox) => Promise<T | typeof NEEDS_TRANSACTION>

export interface RunOptions {
  /** The job writes more than one statement even without events (an insert that marks its idempotency key): never alone. */
  readonly inTransaction?: boolean
}

export interface EventWrites {
  run: <T>(job: WriteJob<T>, options?: RunOptions) => Promise<T>
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

const ALONE: Outbox = {
  add: async () => {},
  addAll: async () => {},
  wanted: async () => false,
  unwatched: noActiveSubscription
}

/**
 * `alone`: where a write's statement can commit by itself and writes
 * interleave anyway (PostgreSQL's pool), for writes to be tried alone first;
 * undefined where every write goes through the writer (SQLite's group commit).
 */
export function eventWrites (writer: Writer, templated: QueryTemplates, alone?: Kysely<Database>): EventWrites {
  const listeners: Array<() => void> = []
  // Whether the last event this process's writes offered found a subscription active: then writes skip the attempt alone.
  let watched = false

  async function inTransaction<T> (job: WriteJob<T>): Promise<T> {
    let enqueued = false
    const result = await writer.run(async w => await job(w, {
      async add (resource, kind, record) {
        if (withoutSubscriptions.has(w)) return
        const inserted = await w.executeQuery(templated('webhook event', eventValues(resource.collection, kind, record), slots => outboxInsert(w, slots)))
        watched = (inserted.numAffectedRows ?? 0n) > 0n
        if (watched) enqueued = true
        else withoutSubscriptions.add(w)
      },
      async addAll (collection, kind, records) {
        await addEvents(w, collection, kind, records)
        enqueued = enqueued || records.length > 0
      },
      wanted: async () => await anySubscription(w)
    }))
    if (result === NEEDS_TRANSACTION) throw new Error('a write job asked for a transaction while running in one')
    if (enqueued) for (const listener of listeners) listener()
    return result
  }

  return {
    async run (job, options) {
      if (alone !== undefined && options?.inTransaction !== true && !watched) {
        const result = await job(alone, ALONE)
        if (result !== NEEDS_TRANSACTION) return result
      }
      return await inTransaction(job)
    },
    onEnqueued (listener) { listeners.push(listener) }
  }
}
