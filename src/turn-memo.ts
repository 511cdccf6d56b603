/**
 * Values made once per key in a turn of the event loop and forgotten at its
 * end (turn-end.ts): for what the requests of one turn share, such as the
 * record a turn's reads by id gave them all. Kept no longer, the values die
 * young, where a WeakMap by the same keys made a read nobody shared cost 1.22
 * times its CPU (bench:ab, GET a random task): the collector weighs every
 * entry against its key's life.
 */
import { beforeTurnEnds } from './turn-end.js'

/** `make(key)`'s value, made at most once for `key` while the memo holds it; a failure is not kept. */
export type Memo<K, V> = (key: K, make: (key: K) => V) => V

/** A memo held for this turn (`undefined` counts as not made). */
export function turnMemo<K, V> (): Memo<K, V> {
  let values = new Map<K, V>()
  const forget = (): void => { values = new Map() }
  return (key, make) => {
    let value = values.get(key)
    if (value === undefined) {
      if (values.size === 0) beforeTurnEnds(forget)
      values.set(key, value = make(key))
    }
    return value
  }
}
