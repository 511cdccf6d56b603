/**
 * The storage interface the handlers use. Nothing outside src/store/ builds SQL
 * or knows which database is behind it; a dialect module implements only what
 * differs between databases.
 */
import type { ProblemIssue } from '../errors.js'
import type { Condition } from '../resources/define.js'
import type { CredentialStore } from './credentials.js'
import type { HeldKey, IdempotencyStore } from './idempotency.js'
import type { WebhookStore } from './webhook-store.js'
import type { Resource } from '../resources/model.js'
import { withoutPassword } from '../url-credentials.js'

/** Columns every table has besides the declared fields. */
export const SYSTEM_COLUMNS = ['id', 'version', 'createdAt', 'updatedAt'] as const

/**
 * One stored record: the system columns plus every field that has a value.
 * A field whose column is NULL is absent, never `null`.
 */
export interface StoredRecord {
  readonly id: number
  /** Incremented by every write; the basis of the ETag. */
  readonly version: number
  readonly createdAt: string
  readonly updatedAt: string
  readonly values: Readonly<Record<string, unknown>>
}

export type SortDirection = 'asc' | 'desc'

export interface SortKey {
  readonly field: string
  readonly direction: SortDirection
}

export interface ListQuery {
  /** ANDed; `field` may be a declared field, the owner field or a system column. */
  readonly where: readonly Condition[]
  readonly orderBy: readonly SortKey[]
  readonly limit: number
  readonly offset: number
  /** Keyset position: only rows strictly after these values of `orderBy` (one per key). */
  readonly after?: readonly unknown[]
}

export interface CountedPage {
  readonly records: StoredRecord[]
  /** How many records match the query's conditions, on every page. */
  readonly total: number
}

export interface WriteOptions {
  /** Extra conditions the row must meet (ownership); otherwise the write affects nothing. */
  readonly where?: readonly Condition[]
}

export interface InsertOptions {
  /** The Idempotency-Key the request holds: marked with the new record in the same transaction. */
  readonly idempotency?: HeldKey
}

export interface MigrationReport {
  /** Human-readable statements of what was applied, empty when the schema was current. */
  readonly applied: readonly string[]
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres'
  /** API keys and OAuth clients. */
  readonly credentials: CredentialStore
  /** Responses remembered under Idempotency-Key. */
  readonly idempotency: IdempotencyStore
  /** Webhook subscriptions, their outbox and deliveries. */
  readonly webhooks: WebhookStore
  /** Calls `listener` after each committed write of this process that added a webhook event. */
  onEventsEnqueued (listener: () => void): void
  /** Creates or additively extends every table; throws MigrationRefused for destructive changes. */
  migrate (): Promise<MigrationReport>
  /** Resolves when the database answers; rejects when it is unreachable. */
  ping (): Promise<void>
  close (): Promise<void>
  /** A random 32-byte secret kept in the database, created on first use, shared by every process. */
  secret (name: string): Promise<Buffer>

  list (resource: Resource, query: ListQuery): Promise<StoredRecord[]>
  count (resource: Resource, where: readonly Condition[]): Promise<number>
  /**
   * A page and the count of every record matching `query.where`, read
   * together: they read the change stamp once between them, so the page is
   * remembered by it even where that read is a round trip (PostgreSQL), which
   * `list` alone does not pay for.
   */
  countedPage (resource: Resource, query: ListQuery): Promise<CountedPage>
  get (resource: Resource, id: number, options?: WriteOptions): Promise<StoredRecord | undefined>
  /** The issues of `values` whose foreign keys point at no row: what an insert or update of them would be refused for. */
  missingParents (resource: Resource, values: Readonly<Record<string, unknown>>): Promise<ProblemIssue[]>
  /** `values` holds every writable field (undefined = no value) and the owner when stamped. */
  insert (resource: Resource, values: Readonly<Record<string, unknown>>, options?: InsertOptions): Promise<StoredRecord>
  /**
   * Reads the record and replaces every writable field with what `edit` makes
   * of it, storing only if the record is still the version read. `edit` may
   * throw to refuse the write (a failed precondition, a read-only change).
   */
  update (resource: Resource, id: number, edit: Edit, options?: WriteOptions): Promise<StoredRecord | WriteMiss>
  /** Reads the record, lets `check` refuse by throwing, and deletes it if it is still the version read. */
  remove (resource: Resource, id: number, check: (current: StoredRecord) => void, options?: WriteOptions): Promise<'removed' | WriteMiss>
}

/** The writable values to store, computed from the record as it is now. */
export type Edit = (current: StoredRecord) => Readonly<Record<string, unknown>>

/**
 * Why a read-then-write stored nothing: no visible record, or the record
 * changed between the read and the write (never on SQLite, where both run in
 * one write transaction; possible on PostgreSQL, where the caller retries).
 */
export type WriteMiss = 'missing' | 'raced'

export const isWriteMiss = (outcome: unknown): outcome is WriteMiss => outcome === 'missing' || outcome === 'raced'

/** The database DATABASE_URL names cannot be opened or reached: said in one line, with the password left out. */
export class DatabaseUnreachable extends Error {
  override name = 'DatabaseUnreachable'
  constructor (databaseUrl: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    super(`DATABASE_URL=${withoutPassword(databaseUrl)}: the database cannot be opened or reached: ${reason}`, { cause })
  }
}

export class MigrationRefused extends Error {
  override name = 'MigrationRefused'
  constructor (readonly reasons: readonly string[]) {
    super(`the database schema cannot be brought in line with the definitions without losing data:\n- ${reasons.join('\n- ')}`)
  }
}
