/**
 * Where the log lines go: stdout, in one write per turn of the event loop,
 * at its end (stdoutPerTurn). Under load the lines of many requests share
 * one write; when idle a line is written as soon as its request is done. A
 * process that exits writes the lines of its last turn first; only a SIGKILL
 * in the middle of a turn can lose that turn's lines. What a request's line
 * says is request-log.ts.
 */
import { EventEmitter } from 'node:events'
import { writeSync } from 'node:fs'
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import pino from 'pino'
import { beforeTurnEnds } from '../turn-end.js'

export interface LogDestination { write (line: string): void }

/** Flushes of destinations holding lines of the current turn; a process exiting mid-turn writes them first. */
const heldAtExit = new Set<() => void>()
let flushingAtExit = false

/**
 * stdout, written once a turn: the lines of one turn of the event loop are
 * joined and handed to the kernel in one synchronous write at its end
 * (turn-end.ts), after the turn's answers. Before, each line was encoded
 * on its own into sonic-boom's asynchronous mode, whose every write crossed
 * to a thread-pool thread: on the server's one pinned core, a context switch
 * there and back. In bench:ab against that (GET one, JWT, three runs) the
 * server's CPU per request was 0.972–0.985 of it and its throughput
 * 1.010–1.044. (Against the old way, writing no line at all gained
 * 1.09–1.18; the rest of that is in making each line, which this leaves.)
 *
 * Synchronous, as pino's own default destination is: a line is in the
 * kernel by the end of the turn that logged it, so a crash loses none of
 * the turns before it. A reader that stops reading (a full pipe) holds the
 * process at that write until it reads again, rather than letting held
 * lines grow in memory; sonic-boom retries a busy write (EAGAIN) and, on a
 * broken pipe, pino stops logging.
 */
function stdoutPerTurn (): LogDestination {
  if (!flushingAtExit) {
    flushingAtExit = true
    process.once('exit', () => { for (const flush of heldAtExit) flush() })
  }
  // As bytes: in its text mode, sonic-boom measures a string's bytes and then encodes it again after the write.
  const destination = pino.destination({ dest: 1, sync: true, contentMode: 'buffer' })
  const { flushSync, end } = destination
  const writeNow = destination.write as unknown as (this: typeof destination, bytes: Buffer) => boolean
  // Set by sonic-boom once ended (or broken), which its types do not declare.
  const ended = (): boolean => (destination as unknown as { destroyed: boolean }).destroyed
  let held: string[] = []
  function flush (): void {
    heldAtExit.delete(flush)
    if (held.length === 0) return
    const lines = Buffer.from(held.join(''))
    held = []
    if (!ended()) {
      writeNow.call(destination, lines)
      return
    }
    // Logged after the log was ended (a connection that closed while the process stopped): sonic-boom
    // throws once ended, and that killed the stopping process. Its end leaves stdout open: the lines go
    // there at once. A failure is dropped: the process is on its way out, with nowhere left to say it.
    try {
      writeSync(1, lines)
    } catch {}
  }
  destination.write = line => {
    if (held.length === 0) {
      heldAtExit.add(flush)
      beforeTurnEnds(flush)
    }
    held.push(line)
    return true
  }
  destination.flushSync = () => { flush(); if (!ended()) flushSync.call(destination) }
  // Ended once: a shutdown's deadline and its end may both end the log.
  destination.end = () => { flush(); if (!ended()) end.call(destination) }
  return destination
}

/** How long a stopping process waits for its last log lines to be written. */
const LOG_END_WAIT_MS = 2000

/**
 * Ends the logger's stdout destination, resolving once the lines it held
 * are written or the write failed, and at the latest after LOG_END_WAIT_MS.
 * A failed write must not hold the exit: with the log's reader gone (a log
 * shipper that died) it fails with EPIPE, and pino then stops logging
 * (sonic-boom 4.2's exit-time flush of its asynchronous mode retried such a
 * write forever). A logger writing elsewhere (tests) has nothing to end.
 */
export async function endLog (logger: FastifyBaseLogger): Promise<void> {
  const destination = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym]
  if (!(destination instanceof EventEmitter) || typeof (destination as { end?: unknown }).end !== 'function') return
  const stream = destination as EventEmitter & { end (): void, destroyed?: boolean }
  // Already ended: its lines are written (flush), and no event will come again.
  if (stream.destroyed === true) return
  await new Promise<void>(resolve => {
    // After an earlier broken pipe, pino has made end() do nothing: no event comes, and the exit-time flush does nothing either.
    const bound = setTimeout(resolve, LOG_END_WAIT_MS)
    const done = (): void => { clearTimeout(bound); resolve() }
    stream.once('close', done)
    stream.once('error', done)
    stream.end()
  })
}

export function loggerOptions (level: string, stream?: LogDestination): FastifyServerOptions['logger'] {
  return {
    level,
    stream: stream ?? stdoutPerTurn(),
    // Credentials must never reach a log line, whichever serializer logs headers.
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' }
  }
}
