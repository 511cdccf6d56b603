/**
 * Work for the end of the event loop's turn: the check phase (setImmediate),
 * after the poll phase has run the callback of every connection and file that
 * was ready. Four mechanisms gather there: SQLite's group commit (the writes
 * that arrived in the turn share a commit), the answers written together
 * (http/turn-end-writes.ts), the end of the turn's read snapshot
 * (store/turn-snapshot.ts) and the turn's log lines, written in one go
 * (http/log-output.ts). They must know of each other: answers a group's
 * commit settles are finished in the check phase, and work scheduled from
 * there with setImmediate waits for the next turn, behind a whole poll phase.
 * Held that long, the answers of one group reached their clients after the
 * next group had begun, which split the next requests over two commits:
 * 14 % fewer durable POSTs a second.
 */

let ending = false

/** Runs `work` at the end of this turn, and says the turn is ending until the promises it settles have run. */
export function atTurnEnd (work: () => void): void {
  setImmediate(function endTurn () {
    ending = true
    // A tick queued from a microtask runs once the microtasks are all done, those they queue included.
    queueMicrotask(() => { process.nextTick(() => { ending = false }) })
    work()
  })
}

/**
 * Runs `work` once the current callback and its promises are done, if this is
 * the end of the turn (atTurnEnd), else at the end of this turn, as the end of
 * the turn: what it asks for in turn runs right after it, not a turn later.
 * The answers written at a turn's end finish their requests, whose log lines
 * then ask to be written; scheduled with a bare setImmediate they waited
 * behind the next whole poll phase (1.3–1.6 ms on average under the bench's
 * GET one, against 0.6–0.7 ms now, the time the answers take to write). What
 * young-generation collections moved to the old generation, to be found there
 * as garbage by a mark-compact, fell with it: sampled over 4 s of GET one,
 * about 17 MB before, 7–9 MB after.
 */
export function beforeTurnEnds (work: () => void): void {
  if (ending) queueMicrotask(() => { process.nextTick(work) })
  else atTurnEnd(work)
}
