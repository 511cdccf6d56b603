/**
 * Answers remembered with the change stamp (Dialect.changeStamp) of the data
 * they were computed from, and given back only while the stamp is the same:
 * a filtered count over a large table costs a scan, while checking the stamp
 * is a single read. The answer is remembered from the moment it is asked for,
 * so requests that arrive while it is being computed, under the same stamp,
 * share that one computation instead of each scanning the table: after a
 * write, the 50 lists waiting for the new count start one count between them,
 * not 50. Sharing is sound because an equal stamp means nothing was committed
 * between the first request's stamp read and the later one's, so the one
 * count sees every write either request must see. Bounded; the oldest entry
 * goes first.
 */
import { BoundedMap } from '../bounded-map.js'

export interface StampedCache<T> {
  /** The answer for `key` under `stamp`: remembered, being computed, or computed now by `compute`. */
  remember (key: string, stamp: string, compute: () => Promise<T>): Promise<T>
}

/**
 * `read` once per turn of the event loop: the reads of one synchronous run
 * (a list's page and its count, started together) share the first one's
 * change stamp, on SQLite one statement and on PostgreSQL one round trip
 * fewer. Sound for the same reason as above, from the other side: a shared
 * stamp is at worst older than the data read after it, so what is remembered
 * under it is asked for again at the next stamp, and a request that begins
 * after a write was answered reads a new stamp (it begins in a later turn).
 */
export function oncePerTurn<T> (read: () => T): () => T {
  let held: { readonly value: T } | undefined
  return () => {
    if (held === undefined) {
      held = { value: read() }
      queueMicrotask(() => { held = undefined })
    }
    return held.value
  }
}

export function stampedCache<T> (maxEntries = 1000): StampedCache<T> {
  const entries = new BoundedMap<string, { readonly stamp: string, readonly answer: Promise<T> }>(maxEntries)
  return {
    async remember (key, stamp, compute) {
      const entry = entries.get(key)
      if (entry?.stamp === stamp) return await entry.answer
      const answer = compute()
      entries.delete(key)
      entries.set(key, { stamp, answer })
      // A failure is not remembered: the next request tries again.
      answer.catch(() => { if (entries.get(key)?.answer === answer) entries.delete(key) })
      return await answer
    }
  }
}
