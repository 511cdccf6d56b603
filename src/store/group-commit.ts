/**
 * Group commit for SQLite. With synchronous=FULL every commit waits for an
 * fsync, so one transaction per request caps writes at the disk's fsync
 * rate. Writes that arrive together (in the same turn of the event loop, or
 * while the previous group was committing) run in one transaction instead,
 * each inside its own savepoint so one write's failure undoes only that
 * write, and share one commit and one fsync. Every caller's promise settles
 * only after that commit: a write is acknowledged only once it is on disk,
 * and if the commit fails, every write of the group fails with it.
 */
import { CompiledQuery, type Kysely } from 'kysely'
import { atTurnEnd } from '../turn-end.js'
import type { Database } from './dialect.js'

export type WriteJob<T> = (db: Kysely<Database>) => Promise<T>

/** Where writes go: `run` for a store write, `db` for anything else on the writing connection. */
export interface Writer {
  readonly db: Kysely<Database>
  run<T> (job: WriteJob<T>): Promise<T>
}

interface Pending {
  readonly job: WriteJob<unknown>
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
}

type Outcome = { readonly ok: true, readonly value: unknown } | { readonly ok: false, readonly error: unknown }

/**
 * Each write in a transaction of its own (a write and its outbox event commit
 * together): for databases that group concurrent commits themselves (PostgreSQL).
 */
export function directWriter (db: Kysely<Database>): Writer {
  return { db, run: async job => await db.transaction().execute(job) }
}

// Compiled once: three of them run for every write.
const SAVEPOINT = CompiledQuery.raw('savepoint grouped_write')
const ROLLBACK_TO = CompiledQuery.raw('rollback to grouped_write')
const RELEASE = CompiledQuery.raw('release grouped_write')

/**
 * `afterCommit` runs once each group is on disk and its writes are settled:
 * for what the commit made stale elsewhere. It must not throw (the writes it
 * follows are committed whatever it does).
 */
export function groupCommitWriter (db: Kysely<Database>, afterCommit?: () => void): Writer {
  let queue: Pending[] = []
  let flushing = false

  async function runGroup (group: readonly Pending[]): Promise<Outcome[]> {
    return await db.transaction().execute(async trx => {
      const outcomes: Outcome[] = []
      for (const { job } of group) {
        await trx.executeQuery(SAVEPOINT)
        try {
          outcomes.push({ ok: true, value: await job(trx) })
        } catch (error) {
          await trx.executeQuery(ROLLBACK_TO)
          outcomes.push({ ok: false, error })
        }
        await trx.executeQuery(RELEASE)
      }
      return outcomes
    })
  }

  async function flush (): Promise<void> {
    flushing = true
    while (queue.length > 0) {
      const group = queue
      queue = []
      try {
        const outcomes = await runGroup(group)
        group.forEach((pending, i) => {
          const outcome = outcomes[i]!
          if (outcome.ok) pending.resolve(outcome.value)
          else pending.reject(outcome.error)
        })
      } catch (error) {
        // The commit itself failed: nothing of this group is on disk.
        for (const pending of group) pending.reject(error)
        continue
      }
      afterCommit?.()
    }
    flushing = false
  }

  function start (): void {
    if (flushing) return
    flush().catch((error: unknown) => {
      // Not expected (each group's failure goes to its writes), but never leave a write hanging.
      for (const pending of queue.splice(0)) pending.reject(error)
      flushing = false
    })
  }

  return {
    db,
    async run<T> (job: WriteJob<T>): Promise<T> {
      return await new Promise<T>((resolve, reject) => {
        queue.push({ job, resolve: resolve as (value: unknown) => void, reject })
        // Writes arriving in this turn of the event loop join the group; later ones wait for the next.
        if (!flushing && queue.length === 1) atTurnEnd(start)
      })
    }
  }
}
