/**
 * Reads by id asked for in one turn of the event loop, sent together as one
 * query at its end (turn-end.ts), where every query is a round trip to a
 * database server (PostgreSQL). Under load, the requests a poll phase reads
 * each want their record: sent one by one, each paid the driver's encoding,
 * a socket write and a read of its answer, which made a GET one cost more
 * CPU than a list of 20 (whose page and count are remembered by the change
 * stamp, read once a turn). A read waits at most for the rest of its turn's
 * poll phase; alone in its turn, it is sent at once after it.
 */
import { beforeTurnEnds } from '../turn-end.js'

/** The most ids one query asks for; a turn that wants more sends several. */
const MOST_IDS_PER_QUERY = 500

interface Waiting<T> {
  resolve (found: T | undefined): void
  reject (error: unknown): void
}

export interface IdBatches<K, T> {
  /** What `read` finds for `id` of `table`, read with every other id of the same table asked for in this turn. */
  load (table: K, id: number): Promise<T | undefined>
}

/** `read` gets a table and distinct ids, and answers with what it found by id (an id it did not find is absent). */
export function idBatches<K, T> (read: (table: K, ids: readonly number[]) => Promise<ReadonlyMap<number, T>>): IdBatches<K, T> {
  let asked = new Map<K, Map<number, Array<Waiting<T>>>>()

  function send (table: K, waiting: ReadonlyMap<number, ReadonlyArray<Waiting<T>>>): void {
    read(table, [...waiting.keys()]).then(found => {
      for (const [id, readers] of waiting) for (const reader of readers) reader.resolve(found.get(id))
    }, (error: unknown) => {
      for (const readers of waiting.values()) for (const reader of readers) reader.reject(error)
    })
  }

  function sendAll (): void {
    const turn = asked
    asked = new Map()
    for (const [table, waiting] of turn) send(table, waiting)
  }

  return {
    async load (table, id) {
      if (asked.size === 0) beforeTurnEnds(sendAll)
      let waiting = asked.get(table)
      if (waiting === undefined) asked.set(table, waiting = new Map())
      let readers = waiting.get(id)
      if (readers === undefined) {
        if (waiting.size === MOST_IDS_PER_QUERY) {
          // This table's batch is full: it goes now, and a new one gathers the rest of the turn.
          send(table, waiting)
          asked.set(table, waiting = new Map())
        }
        waiting.set(id, readers = [])
      }
      const reader = readers
      return await new Promise<T | undefined>((resolve, reject) => { reader.push({ resolve, reject }) })
    }
  }
}
