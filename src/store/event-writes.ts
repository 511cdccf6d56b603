/**
 * Store writes run on the writer with their events: each event goes to the
 * outbox inside the write's own transaction, and once that has committed the
 * dispatcher is told, if some subscription may want it.
 *
 * A write is two steps: it reads what it starts from (the record it
 * changes), then writes. On SQLite both run in the write's transaction, so
 * nothing can change the record in between. Where writes interleave and each
 * has a transaction of its own (PostgreSQL), the read runs before any
 * transaction, with the turn's other reads by id, and the write lands only on
 * the version read; and the write first runs alone: its one write statement
 * commits by itself and carries a condition that it changes nothing while
 * some subscription is active. Without webhooks (the common case) a PATCH is
 * then two round trips (read, write) instead of five (begin, read, write,
 * outbox, commit), and a POST one instead of four. When the statement changed
 * nothing (a subscription is active, or the record changed since it was
 * read), the write is read and run again in a transaction, with its event;
 * while subscriptions stay active, writes go straight there. The writes that
 * reach their transaction in one turn share one
 * (shared-transactions.ts), their statements and their events each gathered
 * into one (gathered-writes.ts): four round trips for the turn, not for each.
 */
import type { Expression, Kysely, SqlBool } from 'kysely'
import type { Resource } from '../resources/model.js'
import type { Database } from './dialect.js'
import type { Writer } from './group-commit.js'
import { addEvents, anySubscription, eventValues, noActiveSubscription, outboxInsert, type EventKind } from './outbox.js'
import type { QueryTemplates } from './query-templates.js'
import type { GatheredWrites, GatherOn } from './gathered-writes.js'
import type { SharedTransactions } from './shared-transactions.js'

/**
 * What a write that ran alone answers when its statement changed nothing: a
 * subscription may be active, or the record changed since it was read. It is
 * read and run again in a transaction, which tells the two apart.
 */
export const NEEDS_TRANSACTION = Symbol('run the write again in a transaction')

export interface Outbox {
  /** Adds the event of one write, if some subscription is active (one statement either way). */
  add: (resource: Resource, kind: EventKind, record: unknown) => Promise<void>
  /** Adds the events of many records of one collection at once, once `wanted` said they are. */
  addAll: (collection: string, kind: EventKind, records: readonly unknown[]) => Promise<void>
  /** Whether events are wanted: some subscription is active (never, for a write running alone). */
  wanted: () => Promise<boolean>
  /**
   * Set when the write runs alone, each statement committing as it runs. It
   * then sends exactly one write statement, carrying this condition (it
   * changes nothing while some subscription is active, so what it does
   * change needs no event), and answers NEEDS_TRANSACTION if that changed
   * nothing. `add`, `addAll` and `wanted` have nothing to do then.
   */
  readonly unwatched?: Expression<SqlBool>
  /**
   * Where the write's statement joins the turn's others of its collection
   * (gathered-writes.ts): running alone, with the turn's lone writes; in a
   * shared transaction, with that transaction's writes. Undefined where it
   * runs by itself.
   */
  readonly gathered?: GatheredWrites
}

/** A store write's two steps. */
export interface WriteSteps<R, T> {
  /**
   * Reads what the write starts from: on `executor`, the write's transaction
   * (SQLite), or else (`outside`) the reading connections outside any
   * transaction, where the write must land only on the version it read.
   */
  readonly read: (executor: Kysely<Database>, outside: boolean) => Promise<R>
  /** The write, made of what was read; in a transaction unless `outbox.unwatched` says it runs alone. */
  readonly write: (w: Kysely<Database>, outbox: Outbox, read: R) => Promise<T | typeof NEEDS_TRANSACTION>
}

export interface RunOptions {
  /** The write sends more than one statement even without events (an insert that marks its idempotency key): never alone. */
  readonly inTransaction?: boolean
  /**
   * The write may share its transaction with the turn's others
   * (shared-transactions.ts): it may run again if one of them failed, and
   * its statements do not read what another write of the turn may change
   * (a create, an edit, a delete that cascades to nothing; not one that
   * does: it reads the records it takes with it, for their events).
   */
  readonly shareable?: boolean
}

/** Where writes interleave (PostgreSQL's pool): where their reads run, and how a turn's writes are gathered. */
export interface Interleaved {
  readonly db: Kysely<Database>
  /** The transactions a turn's shareable writes share, and how their statements are gathered in each, and those of lone writes. */
  readonly gathering?: { readonly shared: SharedTransactions, readonly on: GatherOn }
}

export interface EventWrites {
  run: <R, T>(steps: WriteSteps<R, T>, options?: RunOptions) => Promise<T>
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
 * its event. (On PostgreSQL a transaction is shared only by the writes of
 * one turn; a subscription another process commits while it runs is made
 * concurrently with those writes, whose events it may or may not get.)
 */
const withoutSubscriptions = new WeakSet<Kysely<Database>>()

/** The outbox of a write running alone: it adds nothing, for its statement changes nothing while events are wanted. */
const outboxAlone = (gathered?: GatheredWrites): Outbox => ({
  add: async () => {},
  addAll: async () => {},
  wanted: async () => false,
  unwatched: noActiveSubscription,
  gathered
})

/**
 * `interleaved`: where writes interleave anyway (PostgreSQL's pool), for
 * their reads to run outside their transactions, for writes to be tried
 * alone first, and for a turn's shareable writes to share a transaction;
 * undefined where every write runs whole in the writer's transactions
 * (SQLite's group commit).
 */
export function eventWrites (writer: Writer, templated: QueryTemplates, interleaved?: Interleaved): EventWrites {
  const listeners: Array<() => void> = []
  // Whether the last event this process's writes offered found a subscription active: then writes skip the attempt alone.
  let watched = false
  const { shared, on: gatherOn } = interleaved?.gathering ?? {}
  const lone = outboxAlone(interleaved === undefined ? undefined : gatherOn?.(interleaved.db, true))
  /** The gathered statements of each shared transaction, made with its first write. */
  const gatheredIn = new WeakMap<Kysely<Database>, GatheredWrites>()
  function gatheredOn (trx: Kysely<Database>): GatheredWrites | undefined {
    if (gatherOn === undefined) return undefined
    let gathered = gatheredIn.get(trx)
    if (gathered === undefined) gatheredIn.set(trx, gathered = gatherOn(trx, false))
    return gathered
  }

  async function inTransaction<R, T> ({ read, write }: WriteSteps<R, T>, options?: RunOptions): Promise<T> {
    let enqueued = false
    // Where writes interleave, the read goes first, outside: the transaction then holds its connection for the write alone.
    const readFirst = interleaved === undefined ? undefined : { value: await read(interleaved.db, true) }
    const sharing = options?.shareable === true && shared !== undefined
    const result = await (sharing ? shared : writer).run(async w => {
      // A shared transaction that failed runs its jobs again: only the last run's events count.
      enqueued = false
      const gathered = sharing ? gatheredOn(w) : undefined
      const outbox: Outbox = {
        async add (resource, kind, record) {
          if (withoutSubscriptions.has(w)) return
          const values = eventValues(resource.collection, kind, record)
          const addAlone = async (): Promise<boolean> => ((await w.executeQuery(templated('webhook event', values, slots => outboxInsert(w, slots)))).numAffectedRows ?? 0n) > 0n
          watched = gathered === undefined ? await addAlone() : await gathered.event(values, addAlone)
          if (watched) enqueued = true
          else withoutSubscriptions.add(w)
        },
        async addAll (collection, kind, records) {
          await addEvents(w, collection, kind, records)
          enqueued = enqueued || records.length > 0
        },
        wanted: async () => await anySubscription(w),
        gathered
      }
      return await write(w, outbox, readFirst === undefined ? await read(w, false) : readFirst.value)
    })
    if (result === NEEDS_TRANSACTION) throw new Error('a write asked for a transaction while running in one')
    if (enqueued) for (const listener of listeners) listener()
    return result
  }

  return {
    async run (steps, options) {
      if (interleaved !== undefined && options?.inTransaction !== true && !watched) {
        const result = await steps.write(interleaved.db, lone, await steps.read(interleaved.db, true))
        if (result !== NEEDS_TRANSACTION) return result
      }
      return await inTransaction(steps, options)
    },
    onEnqueued (listener) { listeners.push(listener) }
  }
}
