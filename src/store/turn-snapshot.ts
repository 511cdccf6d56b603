/**
 * The reads of one turn of the event loop in one read transaction on SQLite's
 * read connection. A read on its own is a transaction of its own, and in WAL
 * mode each one takes and drops a read lock on the shared-memory file: two
 * fcntl system calls, which perf put at 4 % of a GET one's CPU under the
 * bench. The requests of one turn (every connection the poll phase found
 * ready) now share one lock, taken by the first read and dropped at the end
 * of the turn (beforeTurnEnds: the check phase; when the turn is already
 * ending, once the callback under way and its promises are done).
 *
 * Sound for the reason the change stamp's once-per-turn read is
 * (stamped-cache.ts): a write is acknowledged only after it commits, and the
 * snapshot is ended before any statement runs on the writing connection (or
 * a write on this one), so a read that follows an acknowledged write of this
 * process always begins a snapshot of its own. A commit by another process
 * is seen from the next turn on, as if its request had come a moment later
 * (two turns, where the first read came from a check-phase callback other
 * than turn-end.ts's: its snapshot lasts until the next check phase).
 */
import type BetterSqlite3 from 'better-sqlite3'
import { beforeTurnEnds } from '../turn-end.js'

export interface TurnSnapshot {
  /**
   * Puts the reads that follow, until the turn ends, in this turn's snapshot,
   * beginning it if none is open, and names it: reads under one number see
   * one state of the data.
   */
  join (): number
  /** Ends this turn's snapshot, if one is open: before anything that may commit. */
  end (): void
}

export function turnSnapshot (database: BetterSqlite3.Database): TurnSnapshot {
  const begin = database.prepare('begin')
  const commit = database.prepare('commit')
  let open = false
  /** Counts the snapshots begun, naming each. */
  let serial = 0

  function end (): void {
    if (!open) return
    open = false
    // An error inside the transaction (a full disk, say) can have rolled it back already.
    if (database.open && database.inTransaction) commit.run()
  }

  return {
    join () {
      if (open) return serial
      // Never inside a transaction the connection holds for another reason: it may write and end it unseen
      // here, so each read there is named on its own.
      if (database.inTransaction) return ++serial
      begin.run()
      open = true
      beforeTurnEnds(end)
      return ++serial
    },
    end
  }
}
