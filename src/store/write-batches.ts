/**
 * Writes that run alone (event-writes.ts), or in one shared transaction
 * (shared-transactions.ts), asked for in one turn of the event loop, sent
 * together at its end as one statement per group (a collection and the
 * columns written: gathered-writes.ts), where every
 * statement is a round trip to a database server (PostgreSQL). Sent one by
 * one, each create paid the driver's work, a socket write that wakes a
 * database backend, and a commit of its own: about 50 µs of the service's
 * CPU per row in the driver alone, against 6 µs per row for fifty sent as
 * one statement, which the server also inserts and commits faster
 * (6,300–7,900 rows a second against 45,000–50,000, one client process with
 * ten connections).
 *
 * A statement is atomic: one failing row (a unique clash, a missing parent)
 * fails it whole, and every write of it then runs alone, so each gets its
 * own answer. Only when the server said it failed, though: a connection lost
 * before the answer leaves unknown whether the statement committed, and
 * running its writes again could make each twice, so they all fail with it
 * (a 503, as a write alone would). A write alone in its turn runs alone at
 * once after it, as one statement. A write waits at most for the rest of its
 * turn's poll phase.
 */
import { beforeTurnEnds } from '../turn-end.js'

/** The most rows one statement writes; a turn that asks for more sends several. */
const MOST_ROWS_PER_STATEMENT = 500

/** A write waiting for its turn's statement; `alone` runs it by itself. */
interface Waiting<R> {
  readonly values: readonly unknown[]
  readonly alone: () => Promise<R | undefined>
  resolve (row: R | undefined): void
  reject (error: unknown): void
}

export interface WriteBatches<K, R> {
  /**
   * The row written of `values` (one row's values, in its group's order) with
   * the other writes of `group` in this turn, or undefined when the
   * statement wrote no row of them (its condition did not hold).
   */
  write (group: K, values: readonly unknown[], alone: () => Promise<R | undefined>): Promise<R | undefined>
}

export interface WriteBatchesOptions<K, R> {
  /**
   * Writes every row of `rows` (the values of each) in one statement, and
   * answers what it wrote of each, at the same positions: undefined for a row
   * it did not write. The groups are compared by identity.
   */
  readonly writeMany: (group: K, rows: ReadonlyArray<readonly unknown[]>) => Promise<ReadonlyArray<R | undefined>>
  /** Whether a failure of `writeMany` is the server's answer, so that nothing of the statement was committed. */
  readonly undone: (error: unknown) => boolean
  /**
   * What no two rows of one statement may share (an edit's record: one
   * statement would apply only one of two edits of a row); a write whose key
   * its group already holds runs alone.
   */
  readonly distinct?: (values: readonly unknown[]) => unknown
}

export function writeBatches<K, R> ({ writeMany, undone, distinct }: WriteBatchesOptions<K, R>): WriteBatches<K, R> {
  let asked = new Map<K, Array<Waiting<R>>>()
  /** The keys of each group's writes of this turn, where they must be distinct. */
  let keys = new Map<K, Set<unknown>>()

  function settleAlone (waiting: Waiting<R>): void {
    waiting.alone().then(waiting.resolve, waiting.reject)
  }

  function send (group: K, waiting: ReadonlyArray<Waiting<R>>): void {
    if (waiting.length === 1) {
      settleAlone(waiting[0]!)
      return
    }
    const failAll = (error: unknown): void => { for (const write of waiting) write.reject(error) }
    writeMany(group, waiting.map(({ values }) => values)).then(rows => {
      if (rows.length === waiting.length) waiting.forEach((write, i) => { write.resolve(rows[i]) })
      else failAll(new Error(`a statement of ${waiting.length} writes answered for ${rows.length}`))
    }, (error: unknown) => {
      // Refused by the server, nothing of it was written: each write runs alone, to its own answer.
      if (undone(error)) for (const write of waiting) settleAlone(write)
      else failAll(error)
    })
  }

  function sendAll (): void {
    const turn = asked
    asked = new Map()
    keys = new Map()
    for (const [group, waiting] of turn) send(group, waiting)
  }

  return {
    async write (group, values, alone) {
      if (distinct !== undefined) {
        let held = keys.get(group)
        if (held === undefined) keys.set(group, held = new Set())
        const key = distinct(values)
        if (held.has(key)) return await alone()
        held.add(key)
      }
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
