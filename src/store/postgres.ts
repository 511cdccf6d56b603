/**
 * The PostgreSQL dialect (pg through Kysely): types, value encoding, error
 * codes and introspection. Strings are stored with COLLATE "C" so they sort
 * by code point exactly as on SQLite, whatever the server's collation; `like`
 * folds case with ICU so it matches beyond ASCII, also as on SQLite.
 */
import { CompiledQuery, Kysely, PostgresDialect, sql, type SqlBool } from 'kysely'
import pg from 'pg'
import { LONGEST_TIMER_MS } from '../duration.js'
import { directWriter } from './group-commit.js'
import { preparingPool } from './prepared-statements.js'
import { isoTimestamp, type ConstraintViolation, type Database, type Dialect } from './dialect.js'
import { keepRowCounts, keepValueCounts, renewTallyFunctions, TALLY_SHARDS } from './postgres-tallies.js'
import { POSTGRES_MAX_NAME_BYTES } from './identifiers.js'
import type { ColumnKind, ExistingColumn, ExistingIndex } from './tables.js'

export interface PostgresOptions {
  readonly url: string
  readonly poolSize: number
  /** Bound on connecting and on each statement, so an outage answers 503 instead of hanging. */
  readonly timeoutMs: number
  /** Named prepared statements (prepared-statements.ts); off behind a pooler that cannot keep them. */
  readonly prepare: boolean
}

const TYPES: Record<ColumnKind, string> = {
  id: 'bigint',
  integer: 'bigint',
  number: 'double precision',
  boolean: 'boolean',
  string: 'text',
  json: 'jsonb',
  timestamp: 'timestamptz'
}

/** What information_schema calls each type, for comparing with the definitions. */
const INTROSPECTED: Record<ColumnKind, string> = { ...TYPES, timestamp: 'timestamp with time zone' }

const INT8 = 20
const TIMESTAMPTZ = 1184
const parseTimestamp = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date
/** A timestamptz as a session in UTC prints it (`2026-11-27 09:20:00.123+00`; the fraction as long as it needs). */
const UTC_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/

/**
 * A timestamptz, in the form the API gives it (RFC 3339, UTC, milliseconds)
 * straight from PostgreSQL's text when the session prints UTC, as every
 * connection of the service's sets it to: pg's own parser, then toISOString,
 * took ten times as long, 0.8 µs for each of the two timestamps of every row.
 * Any other text (a session in another zone, behind a pooler that does not
 * keep session settings; a year past 9999; `infinity`) is still pg's Date;
 * decode takes either. Microseconds are cut to milliseconds, as a Date does.
 */
export function timestampFromText (text: string): string | Date {
  const utc = UTC_TIMESTAMP.exec(text)
  if (utc === null) return parseTimestamp(text)
  return `${utc[1]!}T${utc[2]!}.${(utc[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`
}

// Ids and integers are bigint columns; every value the API accepts is a safe integer, so a number is exact.
const int8FromText = (text: string): number => Number(text)

// pg asks for each field's parser on every result: the parsers are made once, not per call.
const types = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === INT8) return int8FromText
    if (oid === TIMESTAMPTZ && format !== 'binary') return timestampFromText
    return pg.types.getTypeParser(oid, format as 'text')
  }) as typeof pg.types.getTypeParser
}

/**
 * Which transactions have finished, as of now (xmin:xmax:in-progress list):
 * equal texts mean no transaction committed in between, from any process, so
 * an answer computed after the first read still holds. PostgreSQL 13+.
 */
const SNAPSHOT = CompiledQuery.raw('select pg_current_snapshot()::text as stamp')

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300'])

export function openPostgres (options: PostgresOptions): Dialect {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: options.timeoutMs,
    statement_timeout: options.timeoutMs,
    // The client's own bound, a second after the server's, so the server's statement_timeout ends a statement first.
    query_timeout: Math.min(options.timeoutMs + 1000, LONGEST_TIMER_MS),
    types
  })
  // An idle connection that breaks (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  // Nor one that breaks while checked out between two statements of a transaction: pg emits that on the
  // client, not the pool; the transaction's next statement fails and becomes a 503.
  pool.on('connect', client => {
    client.on('error', () => {})
    // Each session prints timestamps in UTC, which timestampFromText reads without a Date, whatever the
    // server's own zone (a server set to local time made every timestamp pg's Date: 0.8 µs each). The
    // statement runs before the connection's first query; nothing else the service sends depends on
    // the zone. Its failure is the broken connection's, which that first query reports.
    client.query("set time zone 'UTC'").catch(() => {})
  })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: options.prepare ? preparingPool(pool) : pool }) })

  return {
    name: 'postgres',
    descendingNullsLastNeedsIndex: true,
    maxNameBytes: POSTGRES_MAX_NAME_BYTES,
    writesOneAtATime: false,
    db,
    // PostgreSQL groups concurrent commits into shared WAL flushes itself.
    writer: directWriter(db),
    columnType: kind => kind === 'string' ? sql`text collate "C"` : sql.raw(TYPES[kind]),
    idColumn: column => column.primaryKey().generatedByDefaultAsIdentity(),
    encode (kind, value) {
      if (value === undefined || value === null) return null
      // pg would turn a JavaScript array into a PostgreSQL array; jsonb wants JSON text.
      if (kind === 'json') return JSON.stringify(value)
      return value
    },
    decode (kind, value) {
      if (value === null || value === undefined) return undefined
      if (kind === 'timestamp') return isoTimestamp(value)
      return value
    },
    like: (column, pattern) => sql<SqlBool>`lower(${column} collate "und-x-icu") like ${pattern.toLowerCase()} escape '\\'`,
    anyOf: (column, values) => sql<SqlBool>`${column} = any(${values})`,
    manyRows: {
      // pg sends a JavaScript array as an array literal; the cast types each element as the column's.
      array: (kind, values) => sql`${values}::${sql.raw(TYPES[kind])}[]`,
      // An ERROR answer: the statement's transaction was rolled back. FATAL ends the session, perhaps after a commit.
      undone: error => error instanceof pg.DatabaseError && error.severity === 'ERROR'
    },
    classify (error): ConstraintViolation | undefined {
      const { code, detail } = (error ?? {}) as { code?: string, detail?: string }
      if (code === '23505') {
        // `Key ("owner", name)=(…) already exists.`: the last column is the field (an owned one is unique per owner).
        // Read from the detail, not the index name, which PostgreSQL may have needed shortened (identifiers.ts).
        const column = detail === undefined ? undefined : /^Key \((?:"?\w+"?, )*"?(\w+)"?\)=/.exec(detail)?.[1]
        return { kind: 'unique', ...(column === undefined ? {} : { column }) }
      }
      if (code === '23503') return { kind: 'foreign-key' }
      const message = (error as Error | undefined)?.message ?? ''
      if ((code !== undefined && (CONNECTION_CODES.has(code) || code.startsWith('08'))) || /timeout|terminat|Connection/i.test(message)) return { kind: 'unavailable' }
      return undefined
    },
    sameType: (kind, dataType) => INTROSPECTED[kind] === dataType,
    async columns (executor) {
      const result = await sql<{ table: string, column: string, type: string, nullable: string }>`
        select table_name as "table", column_name as "column", data_type as "type", is_nullable as "nullable"
        from information_schema.columns where table_schema = current_schema() order by ordinal_position`.execute(executor)
      const tables = new Map<string, ExistingColumn[]>()
      for (const row of result.rows) {
        const columns = tables.get(row.table) ?? []
        columns.push({ name: row.column, dataType: row.type, notNull: row.nullable === 'NO' })
        tables.set(row.table, columns)
      }
      return tables
    },
    async indexNames (executor) {
      const result = await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema()`.execute(executor)
      return new Set(result.rows.map(row => row.name))
    },
    async uniqueIndexes (executor) {
      const result = await sql<ExistingIndex>`select c.relname as name, t.relname as "table",
          array(select a.attname::text from unnest(i.indkey) with ordinality as k(attnum, position)
            join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum order by k.position) as columns
        from pg_index i join pg_class c on c.oid = i.indexrelid join pg_class t on t.oid = i.indrelid
        where t.relnamespace = current_schema()::regnamespace and i.indisunique and not i.indisprimary`.execute(executor)
      return result.rows
    },
    async triggerNames (executor) {
      const result = await sql<{ name: string }>`select t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
        where c.relnamespace = current_schema()::regnamespace and not t.tgisinternal`.execute(executor)
      return new Set(result.rows.map(row => row.name))
    },
    // A query of its own: a page alone is not remembered by it (one read with its count is: countedPage).
    localChangeStamp: false,
    async changeStamp () {
      const { rows } = await db.executeQuery<{ stamp: string }>(SNAPSHOT)
      return rows[0]!.stamp
    },
    tallyShards: TALLY_SHARDS,
    keepRowCounts,
    keepValueCounts,
    renewTallies: renewTallyFunctions,
    async lockMigrations (executor) {
      // Held until the migration transaction ends: a second process waits, then finds nothing to do.
      await sql`select pg_advisory_xact_lock(hashtext('resourcery-migrate'))`.execute(executor)
    }
  }
}
