/**
 * Delivers the outbox: turns events into deliveries for the subscriptions
 * they match, sends each signed, and on failure retries with exponential
 * backoff and jitter (or later, if the receiver says Retry-After) until the
 * event is RETRY_FOR old. A 2xx succeeds; 410 Gone disables the subscription.
 * Every state change is in the database, so a crash or restart loses nothing
 * (a delivery cut off mid-request is sent again: at least once). Several
 * processes share the work: each claims deliveries under a time-limited lock.
 */
import { setMaxListeners } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import { represent } from '../resources/links.js'
import type { Model } from '../resources/model.js'
import type { StoredRecord } from '../store/store.js'
import type { AttemptResult, DueDelivery, WebhookStore } from '../store/webhook-store.js'
import { patternMatches } from './events.js'
import { sendWebhook, type SendResult } from './send.js'
import { signatureHeaders } from './signing.js'
import { resolveTarget, TargetRefused } from './targets.js'

/** Retries go on for at least a day after the event, as the contract promises. */
export const RETRY_FOR_MS = 25 * 3600_000
const MAX_DELAY_MS = 3600_000
const PURGE_EVERY_MS = 3600_000
const BATCH = 20

export interface DispatcherOptions {
  readonly store: WebhookStore
  readonly model: Model
  readonly allowPrivate: boolean
  readonly timeoutMs: number
  /** The first retry's delay; each further one doubles, up to an hour, each jittered down by up to half. */
  readonly retryBaseMs: number
  readonly pollMs: number
  /** Finished deliveries, their attempts and events are kept this long, then purged (checked hourly). */
  readonly retentionMs: number
  readonly log: FastifyBaseLogger
}

export interface Dispatcher {
  /** Starts a round now rather than at the next poll: an event was just added. */
  nudge (): void
  start (): void
  /** Stops polling and waits for the requests under way. */
  stop (): Promise<void>
}

export function backoffMs (attempt: number, baseMs: number, random: () => number = Math.random): number {
  const full = Math.min(baseMs * 2 ** (attempt - 1), MAX_DELAY_MS)
  return Math.round(full / 2 + random() * full / 2)
}

/** The body of an event: `{ id, type, timestamp, data }`, the same bytes on every attempt. */
export function eventBody (model: Model, delivery: DueDelivery): string {
  const { event } = delivery
  const record = JSON.parse(event.record) as StoredRecord
  const resource = model.resources.find(candidate => candidate.collection === event.collection)
  const data = event.type.endsWith('.deleted') || resource === undefined ? { id: record.id } : represent(resource, record)
  return JSON.stringify({ id: event.id, type: event.type, timestamp: event.createdAt, data })
}

/** What stop() aborts. Each attempt of a round listens to it while in flight, up to BATCH at once (past 10, Node warns of a leak). */
function stopSignal (): AbortController {
  const controller = new AbortController()
  setMaxListeners(BATCH, controller.signal)
  return controller
}

export function webhookDispatcher (options: DispatcherOptions): Dispatcher {
  const { store, model, log } = options
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let stopped = true
  let again = false
  // A receiver slow to answer must not hold the shutdown for up to WEBHOOK_TIMEOUT_MS: stop() ends its attempt,
  // which is recorded and retried (by this process after a restart, or by another one).
  let stopping = stopSignal()

  function outcomeOf (delivery: DueDelivery, sent: SendResult, attemptedAt: Date): { result: Omit<AttemptResult, 'attemptedAt' | 'durationMs'>, disable?: string } {
    const status = sent.status
    if (status !== undefined && status >= 200 && status < 300) return { result: { responseStatus: status, outcome: 'succeeded' } }
    const responded = status === undefined ? {} : { responseStatus: status }
    const error = sent.error ?? (status !== undefined && status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${String(status)}`)
    if (status === 410) return { result: { ...responded, error: 'HTTP 410: the receiver is gone; subscription disabled', outcome: 'failed' }, disable: 'the receiver answered 410 Gone' }
    const delay = Math.max(backoffMs(delivery.attempts + 1, options.retryBaseMs), (sent.retryAfterSeconds ?? 0) * 1000)
    const next = new Date(attemptedAt.getTime() + delay)
    if (next.getTime() - Date.parse(delivery.event.createdAt) > RETRY_FOR_MS) return { result: { ...responded, error: `${error}; gave up after retrying for a day`, outcome: 'failed' } }
    return { result: { ...responded, error, outcome: 'retrying', nextAttemptAt: next.toISOString() } }
  }

  async function deliver (delivery: DueDelivery): Promise<void> {
    const started = new Date()
    const body = eventBody(model, delivery)
    let sent: SendResult
    try {
      const url = new URL(delivery.subscription.url)
      const target = await resolveTarget(url, { allowPrivate: options.allowPrivate, timeoutMs: options.timeoutMs, signal: stopping.signal })
      const headers = signatureHeaders(delivery.subscription.secret, delivery.event.id, Math.floor(started.getTime() / 1000), body)
      sent = await sendWebhook(url, target, { headers, body, timeoutMs: options.timeoutMs, signal: stopping.signal })
    } catch (error) {
      if (!(error instanceof TargetRefused)) throw error
      sent = { error: `refused: ${error.message}` }
    }
    const { result, disable } = outcomeOf(delivery, sent, started)
    await store.recordAttempt(delivery, { ...result, attemptedAt: started.toISOString(), durationMs: Date.now() - started.getTime() }, disable)
    log.info({ webhook: delivery.subscription.id, event: delivery.event.id, type: delivery.event.type, attempt: delivery.attempts + 1, status: sent.status, outcome: result.outcome }, 'webhook delivery')
  }

  /** One round: fan out new events, then send what is due; true when there may be more to do at once. */
  let purgedAt = 0
  async function round (): Promise<boolean> {
    if (Date.now() - purgedAt > PURGE_EVERY_MS) {
      purgedAt = Date.now()
      await store.purge(new Date(purgedAt - options.retentionMs).toISOString())
    }
    const fanned = await store.fanOut((subscription, type) => subscription.events.some(pattern => patternMatches(pattern, type)), BATCH * 5)
    const now = new Date()
    const due = await store.claimDue(now.toISOString(), new Date(now.getTime() + options.timeoutMs + 30_000).toISOString(), BATCH)
    await Promise.all(due.map(async delivery => { await deliver(delivery) }))
    return fanned === BATCH * 5 || due.length === BATCH
  }

  let soon = false
  function schedule (delay: number): void {
    // Writes nudge at every commit: one pending immediate round serves them all.
    if (stopped || (soon && delay === 0)) return
    clearTimeout(timer)
    soon = delay === 0
    timer = setTimeout(() => {
      soon = false
      run()
    }, delay)
    timer.unref()
  }

  function run (): void {
    if (running !== undefined) {
      again = true
      return
    }
    running = round()
      .then(more => more, (error: unknown) => {
        log.error({ err: error }, 'webhook dispatch failed; retrying')
        return false
      })
      .then(more => {
        running = undefined
        const now = more || again
        again = false
        schedule(now ? 0 : options.pollMs)
      })
  }

  return {
    nudge () {
      if (!stopped) schedule(0)
    },
    start () {
      stopped = false
      stopping = stopSignal()
      schedule(0)
    },
    async stop () {
      stopped = true
      clearTimeout(timer)
      stopping.abort()
      await running
    }
  }
}
