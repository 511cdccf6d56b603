/**
 * Answers computed once per read snapshot (turn-snapshot.ts, SQLite): the
 * requests of one turn that want the same record read it once, as the reads
 * by id of a turn are one query on PostgreSQL (id-batches.ts). Under the
 * bench's GET one, 50 connections and a turn serving about half of them, a
 * read and its decoding were a tenth of a request's CPU.
 *
 * Sound because reads under one snapshot see one state of the data: the
 * answer kept is the one a read of its own would get. Held for one snapshot
 * only, so it never grows past a turn's reads, and what it holds dies young:
 * a cache of records kept across turns made a read of a record that was not
 * cached 1.2 times as costly (bench:ab, GET a random task), its entries
 * outliving the young generation and the collector paying for each.
 */
import type { Memo } from '../turn-memo.js'

/** A memo held for the read snapshot `current` names, joining it (an `undefined` answer is kept too: a record not found). */
export function snapshotMemo<T> (current: () => number): Memo<string, T> {
  let snapshot: number | undefined
  let answers = new Map<string, T>()
  return (key, make) => {
    const now = current()
    if (now !== snapshot) {
      snapshot = now
      answers = new Map()
    } else if (answers.has(key)) {
      return answers.get(key) as T
    }
    const answer = make(key)
    answers.set(key, answer)
    return answer
  }
}
