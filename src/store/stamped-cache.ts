/**
 * Answers remembered with the change stamp (Dialect.changeStamp) of the data
 * they were computed from, and given back only while the stamp is the same:
 * a count over a large table costs a scan, while checking the stamp is a
 * single read. Bounded; the oldest entry goes first.
 */
import { BoundedMap } from '../bounded-map.js'

export interface StampedCache<T> {
  get (key: string, stamp: string): T | undefined
  set (key: string, stamp: string, value: T): void
}

export function stampedCache<T> (maxEntries = 1000): StampedCache<T> {
  const entries = new BoundedMap<string, { readonly stamp: string, readonly value: T }>(maxEntries)
  return {
    get (key, stamp) {
      const entry = entries.get(key)
      return entry?.stamp === stamp ? entry.value : undefined
    },
    set (key, stamp, value) {
      entries.delete(key)
      entries.set(key, { stamp, value })
    }
  }
}
