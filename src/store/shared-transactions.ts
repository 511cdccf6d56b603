/**
 * Where each write with an event is a transaction of its own (PostgreSQL
 * while a webhook subscription is active), a create or edit is four round
 * trips: begin, the write, its outbox row, commit. The writes that reach
 * their transaction in one turn of the event loop share one instead: their
 * jobs run together on it, and it commits once for all of them. Each
 * caller's promise settles only after that commit.
 *
 * A shared transaction commits only if every job in it succeeded. Otherwise
 * it is rolled back whole (one failed statement aborts a PostgreSQL
 * transaction for every job in it) and nothing of it is kept: the jobs that
 * failed run again each in a transaction of its own, to their own answers,
 * and the others share one more, whose failure runs them each alone too. So
 * every job's answer comes from a transaction in which it was alone or in
 * which every job succeeded, exactly as if it had run alone. A job must
 * therefore be safe to run again (the store's writes are: each starts from
 * what it read before, and lands only on that version).
 *
 * A commit that fails is the server's answer when `undone` says so: nothing
 * was committed, and the jobs run again each alone. Any other failure (the
 * connection lost) leaves unknown whether it committed, and every job fails
 * with it, as a transaction of its own would.
 */
import type { Kysely } from 'kysely'
import { beforeTurnEnds } from '../turn-end.js'
import type { Database } from './dialect.js'
import type { WriteJob } from './group-commit.js'

interface Pending {
  readonly job: WriteJob<unknown>
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
}

export interface SharedTransactions {
  /** `job` on a transaction shared with the other jobs of this turn; settled once that has committed. */
  run<T> (job: WriteJob<T>): Promise<T>
}

/** Thrown out of a shared transaction's body to roll it back: the jobs' own outcomes. */
class SomeJobFailed extends Error {
  constructor (readonly outcomes: ReadonlyArray<PromiseSettledResult<unknown>>) {
    super('a job of a shared transaction failed')
  }
}

/** `undone`: whether a failed commit is the server's refusal, so that nothing of it was committed. */
export function sharedTransactions (db: Kysely<Database>, undone: (error: unknown) => boolean): SharedTransactions {
  let waiting: Pending[] = []

  function alone ({ job, resolve, reject }: Pending): void {
    db.transaction().execute(job).then(resolve, reject)
  }

  /** Runs `group` in one transaction; `again` is whether its jobs, if some fail, get one more shared transaction. */
  function together (group: readonly Pending[], again: boolean): void {
    if (group.length === 1) {
      alone(group[0]!)
      return
    }
    let ran = false
    db.transaction().execute(async trx => {
      ran = true
      const outcomes = await Promise.allSettled(group.map(async ({ job }) => await job(trx)))
      if (outcomes.some(outcome => outcome.status === 'rejected')) throw new SomeJobFailed(outcomes)
      return outcomes
    }).then(outcomes => {
      group.forEach((pending, i) => { pending.resolve((outcomes[i] as PromiseFulfilledResult<unknown>).value) })
    }, (error: unknown) => {
      if (error instanceof SomeJobFailed) {
        const succeeded = group.filter((_, i) => error.outcomes[i]!.status === 'fulfilled')
        for (const [i, pending] of group.entries()) if (error.outcomes[i]!.status === 'rejected') alone(pending)
        if (again) together(succeeded, false)
        else for (const pending of succeeded) alone(pending)
      } else if (!ran || undone(error)) {
        // Nothing was committed: it never began, or the server refused its commit.
        for (const pending of group) alone(pending)
      } else {
        for (const pending of group) pending.reject(error)
      }
    })
  }

  function sendAll (): void {
    const group = waiting
    waiting = []
    together(group, true)
  }

  return {
    async run<T> (job: WriteJob<T>): Promise<T> {
      return await new Promise<T>((resolve, reject) => {
        if (waiting.length === 0) beforeTurnEnds(sendAll)
        waiting.push({ job, resolve: resolve as (value: unknown) => void, reject })
      })
    }
  }
}
