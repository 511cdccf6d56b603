/**
 * Identical reads asked for in one turn of the event loop, made once at its
 * end (turn-end.ts) and their answer given to each, where every read is a
 * round trip to a database server (PostgreSQL) and no change stamp tells
 * whether an answer still holds without one (stamped-cache.ts). A page read
 * by cursor paid a query of its own per request: 350 µs of the service's
 * CPU for a page of 20, of which the socket write that wakes a PostgreSQL
 * backend alone took a quarter; 50 connections wanting one page now cost
 * 100–110 µs each.
 *
 * Sound because the read is sent only once the turn is over: every request
 * that shares it had arrived before it was sent, so it sees every write any
 * of them must see (one acknowledged before the request was made), exactly
 * as a read of its own sent at that moment would. A read waits at most for
 * the rest of its turn's poll phase, as reads by id do (id-batches.ts).
 */
import { beforeTurnEnds } from '../turn-end.js'

export interface TurnShared<T> {
  /** What `read` answers, read once for every request of this turn that asks with the same `key`. */
  load (key: string, read: () => Promise<T>): Promise<T>
}

interface Asked<T> {
  /** Starts the read; called once, at the end of the turn. */
  readonly start: () => void
  readonly answer: Promise<T>
}

export function turnShared<T> (): TurnShared<T> {
  let asked = new Map<string, Asked<T>>()

  function startAll (): void {
    const turn = asked
    asked = new Map()
    for (const { start } of turn.values()) start()
  }

  return {
    async load (key, read) {
      let entry = asked.get(key)
      if (entry === undefined) {
        if (asked.size === 0) beforeTurnEnds(startAll)
        let start!: () => void
        // Whichever request asked first reads for all: an equal key asks for the same rows.
        const answer = new Promise<void>(resolve => { start = resolve }).then(read)
        asked.set(key, entry = { start, answer })
      }
      return await entry.answer
    }
  }
}
