/**
 * DNS lookups with a deadline, a stop, and a bound on how many run at once.
 * getaddrinfo runs in libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE
 * says otherwise), which scrypt (client secrets), zlib and asynchronous file
 * reads share. A resolver that does not answer holds its thread for its own
 * time-outs and retries, tens of seconds, and a lookup cannot be cancelled: a
 * caller can stop waiting for it, but its thread stays taken until it returns.
 * So lookups, given-up ones included until they return, take at most
 * MAX_RUNNING of those threads; one that finds them all taken waits, within
 * its own deadline, and never starts if that passes first.
 */
import type { LookupAddress } from 'node:dns'
import { lookup } from 'node:dns/promises'

/** Lookups in the thread pool at once: half of its default four threads. */
const MAX_RUNNING = 2

/** Why a name gave no address: it does not resolve, or not within the deadline, or the caller stopped waiting. */
export class LookupFailed extends Error {
  override name = 'LookupFailed'
}

export interface LookupBounds {
  /** The longest wait for an answer, a free thread included. */
  readonly timeoutMs: number
  /** Ends the wait at once. */
  readonly signal?: AbortSignal
}

let running = 0
const waiting: Array<() => void> = []

/** A lookup returned: its thread goes to the next one waiting, if any. */
function release (): void {
  const next = waiting.shift()
  if (next === undefined) running--
  else next()
}

/** Starts `start` now if a thread is free to it, else when one is; its lookup calls release() once it returns. */
function whenFree (start: () => void): void {
  if (running < MAX_RUNNING) {
    running++
    start()
  } else {
    waiting.push(start)
  }
}

/** `host`'s addresses, or LookupFailed once it did not resolve, ran out of time, or was stopped. */
export async function boundedLookup (host: string, { timeoutMs, signal }: LookupBounds): Promise<LookupAddress[]> {
  const stopped = (): LookupFailed => new LookupFailed('was not resolved before the service stopped')
  if (signal?.aborted === true) throw stopped()
  return await new Promise<LookupAddress[]>((resolve, reject) => {
    let settled = false
    const settle = (outcome: () => void): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onStop)
      const queued = waiting.indexOf(start)
      if (queued !== -1) waiting.splice(queued, 1)
      outcome()
    }
    const timer = setTimeout(() => { settle(() => { reject(new LookupFailed(`did not resolve within ${timeoutMs} ms`)) }) }, timeoutMs)
    const onStop = (): void => { settle(() => { reject(stopped()) }) }
    signal?.addEventListener('abort', onStop, { once: true })
    // After a give-up the lookup goes on in its thread; its answer is dropped, and its thread counted until it returns.
    const start = (): void => {
      lookup(host, { all: true }).then(addresses => { settle(() => { resolve(addresses) }) }, (error: NodeJS.ErrnoException) => {
        settle(() => { reject(new LookupFailed(`does not resolve (${error.code ?? 'lookup failed'})`)) })
      }).finally(release)
    }
    whenFree(start)
  })
}
