/**
 * What the webhook store holds and does, as the dispatcher and the admin
 * routes see it: subscriptions, the outbox events they receive, deliveries
 * due, and the record of every attempt. The SQL is in webhooks.ts.
 */
import type { LiveItems } from './live-items.js'

export interface Subscription {
  readonly id: number
  readonly url: string
  /** `tasks.created`, `tasks.*`, `*.deleted`, `*`. */
  readonly events: readonly string[]
  /** `whsec_` + base64 of the key: never leaves the server after the create response. */
  readonly secret: string
  readonly createdAt: string
  readonly disabledAt?: string
  readonly disabledReason?: string
}

export interface OutboxEvent {
  readonly id: string
  /** `{collection}.{kind}` */
  readonly type: string
  readonly collection: string
  /** JSON of the stored record as written (for deleted: its id). */
  readonly record: string
  readonly createdAt: string
}

export interface DueDelivery {
  readonly id: number
  readonly attempts: number
  readonly createdAt: string
  readonly subscription: Subscription
  readonly event: OutboxEvent
}

export interface AttemptRecord {
  readonly id: number
  readonly webhookId: number
  readonly deliveryId: number
  readonly eventId: string
  readonly eventType: string
  readonly attempt: number
  readonly attemptedAt: string
  readonly durationMs: number
  readonly responseStatus?: number
  readonly error?: string
  readonly outcome: 'succeeded' | 'retrying' | 'failed'
  readonly nextAttemptAt?: string
}

export type AttemptResult = Omit<AttemptRecord, 'id' | 'webhookId' | 'deliveryId' | 'eventId' | 'eventType' | 'attempt'>

export interface WebhookStore {
  create (subscription: Omit<Subscription, 'id' | 'createdAt' | 'disabledAt' | 'disabledReason'>): Promise<Subscription>
  /** Every subscription (a removed one is deleted, not kept). */
  readonly subscriptions: LiveItems<Subscription>
  /** Deletes the subscription and its pending deliveries; false when there was none. */
  remove (id: number): Promise<boolean>
  /** Turns up to `limit` outbox events into deliveries for the subscriptions they match; how many it took. */
  fanOut (matches: (subscription: Subscription, type: string) => boolean, limit: number): Promise<number>
  /** Deliveries due by `now`, each locked for this process until `lockedUntil`. */
  claimDue (now: string, lockedUntil: string, limit: number): Promise<DueDelivery[]>
  /** Records an attempt and what follows from it; `disable` turns the subscription off (410 Gone). */
  recordAttempt (delivery: DueDelivery, result: AttemptResult, disable?: string): Promise<void>
  /** Up to `limit` of a subscription's attempts, newest first; with `before`, only those older than that attempt (a lower id). */
  attempts (webhookId: number, limit: number, before?: number): Promise<AttemptRecord[]>
  /** Forgets attempts, finished deliveries and their events older than `before`; how many attempts went. */
  purge (before: string): Promise<number>
  /**
   * Schedules a finished delivery (succeeded or failed) of one event to one
   * subscription again, due at `now`. Why not, otherwise: no such delivery,
   * already pending, or the subscription is disabled; or, with `withhold`,
   * that it would have been scheduled (a request whose precondition fails
   * still learns first whether it would have failed anyway).
   */
  resend (webhookId: number, eventId: string, now: string, withhold?: boolean): Promise<ResendOutcome>
}

export type ResendOutcome = { readonly scheduled: true } | { readonly scheduled: false, readonly reason: 'missing' | 'pending' | 'disabled' | 'withheld', readonly nextAttemptAt?: string }
