/**
 * The statements Kysely runs on a better-sqlite3 connection: each distinct SQL
 * text prepared once and kept, its rows fetched as arrays.
 */
import type BetterSqlite3 from 'better-sqlite3'
import { BoundedMap } from '../bounded-map.js'
import { objectLiteral } from '../object-literal.js'

/** Statements prepared once per distinct SQL text; the queries come from the definitions, so there are few. */
const STATEMENT_CACHE_SIZE = 500

/** What Kysely's SQLite driver uses of a statement. */
interface KyselyStatement {
  readonly reader: boolean
  readonly readonly: boolean
  all (parameters: readonly unknown[]): unknown[]
  run (parameters: readonly unknown[]): BetterSqlite3.RunResult
  iterate (parameters: readonly unknown[]): IterableIterator<unknown>
}

export interface StatementSource {
  prepare (sql: string): KyselyStatement
  close (): void
  /** Statements that may write, prepared so far: Kysely runs each at once after preparing it. */
  readonly writes: number
}

/**
 * A statement whose rows are fetched as arrays and made objects here:
 * better-sqlite3 builds row objects through V8's C++ API, key by key, which
 * the benchmark measured at a third more than this for a page of 20 rows.
 */
function arrayFetching (statement: BetterSqlite3.Statement): KyselyStatement {
  if (!statement.reader) return statement as unknown as KyselyStatement
  const raw = statement.raw(true)
  // A literal of this statement's columns: built key by key in a loop every statement shared, its stores
  // were megamorphic, 1.5 % of a GET one's CPU in perf.
  const toObject = objectLiteral<unknown>(statement.columns().map(column => column.name))
  return {
    reader: true,
    readonly: statement.readonly,
    all: parameters => (raw.all(parameters) as unknown[][]).map(toObject),
    run: parameters => raw.run(parameters),
    * iterate (parameters) {
      for (const row of raw.iterate(parameters) as IterableIterator<unknown[]>) yield toObject(row)
    }
  }
}

/**
 * `beforeChange` runs before each statement that may change data or end a
 * transaction (a write, BEGIN, COMMIT, a savepoint's release): Kysely runs
 * a statement at once after preparing it.
 */
export function reusingStatements (database: BetterSqlite3.Database, beforeChange?: () => void): StatementSource {
  const statements = new BoundedMap<string, KyselyStatement>(STATEMENT_CACHE_SIZE)
  let writes = 0
  return {
    prepare (sql) {
      const statement = statements.remember(sql, () => arrayFetching(database.prepare(sql)))
      if (!statement.readonly) writes++
      // Transaction control is read-only to SQLite, and returns no rows.
      if (!statement.readonly || !statement.reader) beforeChange?.()
      return statement
    },
    close () { database.close() },
    get writes () { return writes }
  }
}
