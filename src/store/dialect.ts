/**
 * What a database dialect supplies to the shared SQL store: a Kysely instance
 * and the few places where databases differ (types, value encoding, error
 * codes). Everything else lives once, in sql-store.ts and the modules it
 * composes.
 */
import type { ColumnDataType, ColumnDefinitionBuilder, CompiledQuery, Expression, Kysely, SqlBool } from 'kysely'
import type { Writer } from './group-commit.js'
import type { ColumnKind, ExistingColumn, ExistingIndex, IndexTraits } from './tables.js'

/**
 * A timestamp as a dialect reads it, in the API's form (RFC 3339, UTC,
 * milliseconds): SQLite gives back the ISO text that was written, PostgreSQL
 * the same text (timestampFromText) or, for a session not printing UTC, a Date.
 */
export function isoTimestamp (value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value)
}

/** Tables and columns come from the definitions, so the database is typed loosely. */
export type Database = Record<string, Record<string, unknown>>

/** A column type: a name Kysely knows, or raw SQL such as `text collate "C"`. */
export type DataTypeExpression = ColumnDataType | Expression<unknown>

export type ConstraintViolation =
  | { readonly kind: 'unique', readonly column?: string }
  | { readonly kind: 'foreign-key' }
  | { readonly kind: 'unavailable' }

export interface Dialect extends IndexTraits {
  readonly name: 'sqlite' | 'postgres'
  /** Reads (and, where the writer has no connection of its own, everything). */
  readonly db: Kysely<Database>
  readonly writer: Writer
  /** Whether write jobs run one at a time (SQLite's single writer): none can interleave with another, so none needs row locks. */
  readonly writesOneAtATime: boolean
  columnType (kind: ColumnKind): DataTypeExpression
  /** Adds the primary-key behaviour of `id` (auto-increment / identity). */
  idColumn (column: ColumnDefinitionBuilder): ColumnDefinitionBuilder
  /** JavaScript value → what the driver stores for a column of this kind. */
  encode (kind: ColumnKind, value: unknown): unknown
  /** What the driver returns → the JavaScript value of the representation. */
  decode (kind: ColumnKind, value: unknown): unknown
  /** Recognises constraint and connectivity errors of this database; undefined for anything else. */
  classify (error: unknown): ConstraintViolation | undefined
  /** Whether an introspected column type holds values of this kind. */
  sameType (kind: ColumnKind, dataType: string): boolean
  /** Case-insensitive LIKE of a column against an already escaped pattern (escape character `\\`). */
  like (column: Expression<unknown>, pattern: string): Expression<SqlBool>
  /** Names of the indexes that exist (Kysely does not introspect indexes). */
  indexNames (db: Kysely<Database>): Promise<Set<string>>
  /** The unique indexes that exist, each with its table and columns in index order (Kysely does not introspect indexes). */
  uniqueIndexes (db: Kysely<Database>): Promise<ExistingIndex[]>
  /** Names of the triggers that exist, as stored. */
  triggerNames (db: Kysely<Database>): Promise<Set<string>>
  /** The columns of every table in the schema the service uses. */
  columns (db: Kysely<Database>): Promise<Map<string, ExistingColumn[]>>
  /** Serializes concurrent migrations (several processes starting at once); inside the migration transaction. */
  lockMigrations (db: Kysely<Database>): Promise<void>
  /**
   * A value that changes whenever any data may have changed, by this process
   * or another; read before a query, it tells whether that query's earlier
   * answer still holds. Undefined where the database offers no cheap way.
   */
  changeStamp? (): string | Promise<string>
  /**
   * Whether the change stamp is read in this process, without a round trip
   * (SQLite's data_version): then even a page of rows, as cheap as the stamp
   * is on a database server, is worth remembering by it.
   */
  readonly localChangeStamp: boolean
  /**
   * Runs a read at once on the read connection, where the driver is
   * synchronous and that connection never holds a transaction (SQLite's
   * reader): the rows without Kysely's asynchronous connection lock, which
   * cost more than a lookup by id. Undefined where reads must go through `db`.
   */
  readAtOnce? <R> (query: CompiledQuery<R>): R[]
  /**
   * Runs `read`, which reads with `readAtOnce` only, in one read transaction
   * on the read connection: its queries see one state of the data. Defined
   * where `readAtOnce` is.
   */
  inOneSnapshot? <T> (read: () => T): T
  /**
   * Joins the read snapshot the next `readAtOnce` reads in and names it by a
   * number that changes whenever another begins: reads under one number see
   * one state of the data (snapshot-memo.ts). Defined where `readAtOnce` is.
   */
  currentSnapshot? (): number
  /**
   * `column` equal to any of `values`, bound as one array parameter
   * (PostgreSQL's `= any($1)`: one statement text, prepared once, however
   * many values). Defined where reads by id are gathered into one query a
   * turn (id-batches.ts): where each read is a round trip to a server.
   */
  anyOf? (column: Expression<unknown>, values: unknown): Expression<SqlBool>
  /**
   * Defined where a turn's creates of one collection are gathered into one
   * statement (create-batches.ts): where each statement is a round trip to a
   * server, and commits by itself.
   */
  manyRows?: {
    /** The values of one column for many rows, bound as one array parameter of the column's type (PostgreSQL's `$1::bigint[]`). */
    array (kind: ColumnKind, values: unknown): Expression<unknown>
    /** Whether a statement's failure is the server's own answer, so that nothing of it was committed; a lost connection's is not. */
    undone (error: unknown): boolean
  }
  /**
   * `column` as an expression no index can serve, where the database's
   * planner must be told which index to read (SQLite's `+column`); undefined
   * where its statistics choose well (PostgreSQL). Which columns: index-choice.ts.
   */
  unindexed? (column: string): Expression<unknown>
  /**
   * How many rows hold one tally: a collection's row count (row-counts.ts),
   * or, when more than one, a value's count (value-counts.ts).
   */
  readonly tallyShards: number
  /**
   * Makes the database add every row inserted into each of `tables` to its
   * tally in ROW_COUNTS_TABLE and take every deleted one from it, in the
   * writing transaction (triggers). Inside the migration transaction.
   */
  keepRowCounts (trx: Kysely<Database>, tables: readonly string[]): Promise<void>
  /**
   * Makes the database keep, in VALUE_COUNTS_TABLE, how many rows of `table`
   * hold each value of `column` (triggers). Inside the migration transaction.
   */
  keepValueCounts (trx: Kysely<Database>, table: string, column: string): Promise<void>
  /**
   * Brings the tallies kept (`tables`' row counts, `columns`' value counts)
   * to this version's definition where an older one made them, keeping their
   * counts; names what it changed. Inside the migration transaction. Defined
   * where that definition has changed since tallies were first kept (PostgreSQL).
   */
  renewTallies? (trx: Kysely<Database>, tables: readonly string[], columns: ReadonlyArray<readonly [table: string, column: string]>): Promise<string[]>
}
