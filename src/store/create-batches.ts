/**
 * Creates that run alone (event-writes.ts) asked for in one turn of the event
 * loop, sent together at its end as one statement per collection and column
 * set, where every statement is a round trip to a database server
 * (PostgreSQL). Sent one by one, each create paid the driver's work, a socket
 * write that wakes a database backend, and a commit of its own: about 50 µs
 * of the service's CPU per row in the driver alone, against 6 µs per row for
 * fifty sent as one statement, which the server also inserts and commits
 * faster (6,300–7,900 rows a second against 45,000–50,000, one client
 * process with ten connections).
 *
 * The statement changes all of its rows or none: one failing row (a unique
 * clash, a missing parent) fails it whole, and every create of it then runs
 * alone, so each gets its own answer. Only when the server said it failed,
 * though: a connection lost before the answer leaves unknown whether the
 * statement committed, and running its creates again could make each twice,
 * so they all fail with it (a 503, as a create alone would). A create alone
 * in its turn runs alone at once after it, as one statement. A create waits
 * at most for the rest of its turn's poll phase.
 */
import { beforeTurnEnds } from '../turn-end.js'

/** The most rows one statement creates; a turn that asks for more sends several. */
const MOST_ROWS_PER_STATEMENT = 500

/** A create waiting for its turn's statement; `alone` runs it by itself. */
interface Waiting<R> {
  readonly values: readonly unknown[]
  readonly alone: () => Promise<R | undefined>
  resolve (row: R | undefined): void
  reject (error: unknown): void
}

export interface CreateBatches<K, R> {
  /**
   * The row created of `values` (a row's values, in the order of its
   * group's columns) with the other creates of `group` in this turn, or
   * undefined when the statement created none (its condition did not hold).
   */
  create (group: K, values: readonly unknown[], alone: () => Promise<R | undefined>): Promise<R | undefined>
}

export interface CreateBatchesOptions<K, R> {
  /**
   * Creates every row of `rows` (the values of each, in order) in one
   * statement and answers the created rows in the same order, or none at all
   * when its condition did not hold. The groups are compared by identity.
   */
  readonly insertMany: (group: K, rows: ReadonlyArray<readonly unknown[]>) => Promise<readonly R[]>
  /** Whether a failure of `insertMany` is the server's answer, so that nothing of the statement was committed. */
  readonly undone: (error: unknown) => boolean
}

export function createBatches<K, R> ({ insertMany, undone }: CreateBatchesOptions<K, R>): CreateBatches<K, R> {
  let asked = new Map<K, Array<Waiting<R>>>()

  function settleAlone (waiting: Waiting<R>): void {
    waiting.alone().then(waiting.resolve, waiting.reject)
  }

  function send (group: K, waiting: ReadonlyArray<Waiting<R>>): void {
    if (waiting.length === 1) {
      settleAlone(waiting[0]!)
      return
    }
    const failAll = (error: unknown): void => { for (const create of waiting) create.reject(error) }
    insertMany(group, waiting.map(({ values }) => values)).then(rows => {
      if (rows.length === 0) {
        for (const create of waiting) create.resolve(undefined)
      } else if (rows.length === waiting.length) {
        waiting.forEach((create, i) => { create.resolve(rows[i]) })
      } else {
        // All or none: the statement's one condition holds for all of its rows.
        failAll(new Error(`a statement of ${waiting.length} creates answered ${rows.length} rows`))
      }
    }, (error: unknown) => {
      // Refused by the server, nothing of it was created: each create runs alone, to its own answer.
      if (undone(error)) for (const create of waiting) settleAlone(create)
      else failAll(error)
    })
  }

  function sendAll (): void {
    const turn = asked
    asked = new Map()
    for (const [group, waiting] of turn) send(group, waiting)
  }

  return {
    async create (group, values, alone) {
      if (asked.size === 0) beforeTurnEnds(sendAll)
      let waiting = asked.get(group)
      if (waiting === undefined) asked.set(group, waiting = [])
      if (waiting.length === MOST_ROWS_PER_STATEMENT) {
        // This group's statement is full: it goes now, and a new one gathers the rest of the turn.
        send(group, waiting)
        asked.set(group, waiting = [])
      }
      const joined = waiting
      return await new Promise<R | undefined>((resolve, reject) => { joined.push({ values, alone, resolve, reject }) })
    }
  }
}
