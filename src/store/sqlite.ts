/**
 * The embedded SQLite dialect (better-sqlite3). Only what differs from other
 * databases is here: opening the file durably, types, encoding and errors.
 */
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, sql, type CompiledQuery, type SqlBool } from 'kysely'
import type { ConstraintViolation, Database, Dialect } from './dialect.js'
import { groupCommitWriter } from './group-commit.js'
import { PreparedOnceSqliteDialect } from './sqlite-compiler.js'
import { reusingStatements } from './sqlite-statements.js'
import { turnSnapshot } from './turn-snapshot.js'
import { ROW_COUNTS_TABLE } from './row-counts.js'
import { tallyTriggers } from './tally-triggers.js'
import { VALUE_COUNTS_TABLE } from './value-counts.js'
import type { ColumnKind } from './tables.js'
import { canonicalJson } from './canonical-json.js'
import { makeFolder } from '../folders.js'

export type SqliteSynchronous = 'FULL' | 'NORMAL' | 'EXTRA'

export interface SqliteOptions {
  /** A file path, or `:memory:`. */
  readonly file: string
  /**
   * FULL (default) makes an acknowledged write survive a power loss; NORMAL
   * only a process crash, in exchange for fewer fsyncs.
   */
  readonly synchronous: SqliteSynchronous
}

const TYPES: Record<ColumnKind, 'text' | 'integer' | 'real'> = {
  id: 'integer',
  integer: 'integer',
  number: 'real',
  boolean: 'integer',
  string: 'text',
  json: 'text',
  timestamp: 'text'
}

/** Page cache per connection, in KiB. */
const CACHE_KIB = 8192

/**
 * Bytes per database page, for files this creates (an existing file keeps its
 * own). Every write puts each page it changes into the WAL whole, and a record
 * changes one page per index it is in (a task: nine), so a smaller page is
 * less to write, fsync and copy back at checkpoint. Against SQLite's 4096, on
 * the bench's tasks in five interleaved pairs: POST +14 to +50 % req/s, PATCH
 * within noise, reads unchanged, peak RSS 5 to 10 MB lower. Not 1024: a
 * record past ~2 KB, or an index key past ~490 bytes, spills to overflow
 * pages, and at 1024 that begins at ~1 KB and ~230 bytes.
 */
const PAGE_BYTES = 2048

function connect ({ file, synchronous }: SqliteOptions): BetterSqlite3.Database {
  const database = new BetterSqlite3(file)
  // Only a file with no page yet takes it: before journal_mode, whose switch to WAL writes the first page.
  database.pragma(`page_size = ${PAGE_BYTES}`)
  database.pragma('journal_mode = WAL')
  database.pragma(`synchronous = ${synchronous}`)
  database.pragma('foreign_keys = ON')
  database.pragma('busy_timeout = 5000')
  // 8 MiB of page cache per connection, not better-sqlite3's 16: pages past it come from the OS's own
  // cache for a system call each. Under random PATCHes the bench measured no CPU difference per write
  // and 7 MB less resident memory; a write on the other connection empties the reader's cache anyway.
  database.pragma(`cache_size = ${-CACHE_KIB}`)
  // SQLite's lower() and LIKE fold ASCII only; JavaScript folds all of Unicode, as PostgreSQL's ILIKE does.
  database.function('resourcery_fold', { deterministic: true }, (value: unknown) => typeof value === 'string' ? value.toLowerCase() : value)
  return database
}

async function schemaObjects (executor: Kysely<Database>, type: 'index' | 'trigger'): Promise<Set<string>> {
  const result = await sql<{ name: string }>`select name from sqlite_master where type = ${type}`.execute(executor)
  return new Set(result.rows.map(row => row.name))
}

/**
 * Two connections to the file: reads on one, writes (grouped into shared
 * commits) on the other, so a read never queues behind a group's open
 * transaction; WAL lets readers and the writer work at once. Both run on the
 * event loop's thread (better-sqlite3 is synchronous), so a group's commit,
 * fsync included, still pauses every request while it runs: the benchmark
 * measured synchronous=NORMAL, which leaves that fsync out, at only 10-15 %
 * more PATCHes, the price of durability per group rather than per write.
 * An in-memory database is one connection.
 */
export function openSqlite (options: SqliteOptions): Dialect {
  if (options.file !== ':memory:') makeFolder(dirname(options.file))
  const reading = connect(options)
  const turn = turnSnapshot(reading)
  const statements = reusingStatements(reading, turn.end)
  const db = new Kysely<Database>({ dialect: new PreparedOnceSqliteDialect({ database: statements }) })
  // Whatever the writer runs may commit: the reads after it must see it, in a snapshot of their own.
  const writing = options.file === ':memory:' ? db : new Kysely<Database>({ dialect: new PreparedOnceSqliteDialect({ database: reusingStatements(connect(options), turn.end) }) })
  // data_version changes when another connection commits (the writer, another process); writes on this one are counted.
  const dataVersion = reading.prepare('pragma data_version').pluck()
  // Any commit in WAL mode makes the reader drop its whole page cache at its next read, so its pages are
  // dead weight from then on: freed at once, the writer's pages reuse their memory instead of adding to it.
  const releaseReaderPages = reading.prepare('pragma shrink_memory')

  return {
    name: 'sqlite',
    descendingNullsLastNeedsIndex: false,
    writesOneAtATime: true,
    db,
    writer: groupCommitWriter(writing, options.file === ':memory:' ? undefined : () => { releaseReaderPages.run() }),
    columnType: kind => TYPES[kind],
    idColumn: column => column.primaryKey().autoIncrement(),
    encode (kind, value) {
      if (value === undefined || value === null) return null
      if (kind === 'boolean') return value === true ? 1 : 0
      if (kind === 'json') return canonicalJson(value)
      return value
    },
    decode (kind, value) {
      if (value === null || value === undefined) return undefined
      if (kind === 'boolean') return value === 1
      if (kind === 'json') return JSON.parse(value as string) as unknown
      return value
    },
    classify (error): ConstraintViolation | undefined {
      const code = (error as { code?: unknown } | null)?.code
      if (typeof code !== 'string') return undefined
      if (code === 'SQLITE_CONSTRAINT_UNIQUE') {
        // "UNIQUE constraint failed: projects.name", or "…: notes.owner, notes.name" for one per owner: the last is the field.
        const column = /UNIQUE constraint failed: .*\.([^.\s,]+)$/.exec((error as Error).message)?.[1]
        return { kind: 'unique', ...(column === undefined ? {} : { column }) }
      }
      // ON DELETE RESTRICT reports SQLITE_CONSTRAINT_TRIGGER with the same message as other key failures.
      if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || (code.startsWith('SQLITE_CONSTRAINT') && (error as Error).message.includes('FOREIGN KEY'))) {
        return { kind: 'foreign-key' }
      }
      if (code === 'SQLITE_BUSY' || code === 'SQLITE_CANTOPEN' || code.startsWith('SQLITE_IOERR')) return { kind: 'unavailable' }
      return undefined
    },
    like: (column, pattern) => sql<SqlBool>`resourcery_fold(${column}) like ${pattern.toLowerCase()} escape '\\'`,
    // A unary plus makes a column an expression: SQLite compares it as it stands, but reads no index for it.
    unindexed: column => sql`+${sql.ref(column)}`,
    sameType: (kind, dataType) => TYPES[kind] === dataType.toLowerCase(),
    async columns (executor) {
      const tables = await executor.introspection.getTables()
      return new Map(tables.map(table => [table.name, table.columns.map(column => ({ name: column.name, dataType: column.dataType, notNull: !column.isNullable }))]))
    },
    // The first write of the migration transaction takes SQLite's database lock; nothing more is needed.
    async lockMigrations () {},
    changeStamp: () => {
      turn.join()
      return `${String(dataVersion.get())}.${statements.writes}`
    },
    localChangeStamp: true,
    // An in-memory database has one connection, which a group of writes holds open across awaits: reads wait their turn there.
    ...(options.file === ':memory:'
      ? {}
      : {
          readAtOnce: <R>(query: CompiledQuery<R>) => {
            turn.join()
            return statements.prepare(query.sql).all(query.parameters) as R[]
          },
          // Every read of the turn is in one snapshot already.
          inOneSnapshot: <T>(read: () => T) => {
            turn.join()
            return read()
          },
          currentSnapshot: () => turn.join()
        }),
    // One writer at a time: nobody waits on a single tally row that is not already waiting for the lock.
    tallyShards: 1,
    async keepRowCounts (trx, tables) {
      // Row triggers (SQLite has no other kind); ON DELETE CASCADE fires them too. A trigger takes no parameters.
      for (const table of tables) {
        const [inserts, deletes] = tallyTriggers(table) as [string, string]
        for (const [name, event, sign] of [[inserts, 'insert', '+'], [deletes, 'delete', '-']] as const) {
          await sql`create trigger if not exists ${sql.id(name)} after ${sql.raw(event)} on ${sql.table(table)}
            begin update ${sql.table(ROW_COUNTS_TABLE)} set total = total ${sql.raw(sign)} 1 where collection = ${sql.lit(table)} and shard = 0; end`.execute(trx)
        }
      }
    },
    async keepValueCounts (trx, table, column) {
      // Row triggers on the few rows of VALUE_COUNTS_TABLE; an update trigger fires only when the statement sets the column and the value changed.
      const value = (row: 'new' | 'old') => sql`${sql.raw(row)}.${sql.id(column)}`
      const add = sql`insert into ${sql.table(VALUE_COUNTS_TABLE)} (collection, field, value, total)
        select ${sql.lit(table)}, ${sql.lit(column)}, cast(${value('new')} as text), 1 where ${value('new')} is not null
        on conflict (collection, field, value) do update set total = total + 1;`
      const take = sql`update ${sql.table(VALUE_COUNTS_TABLE)} set total = total - 1
        where collection = ${sql.lit(table)} and field = ${sql.lit(column)} and value = cast(${value('old')} as text);`
      const [inserts, deletes, updates] = tallyTriggers(table, column) as [string, string, string]
      const triggers = [
        { name: inserts, on: sql`insert`, when: sql`${value('new')} is not null`, body: add },
        { name: deletes, on: sql`delete`, when: sql`${value('old')} is not null`, body: take },
        { name: updates, on: sql`update of ${sql.id(column)}`, when: sql`${value('old')} is not ${value('new')}`, body: sql`${take} ${add}` }
      ]
      for (const { name, on, when, body } of triggers) {
        await sql`create trigger if not exists ${sql.id(name)} after ${on} on ${sql.table(table)}
          when ${when} begin ${body} end`.execute(trx)
      }
    },
    indexNames: async executor => await schemaObjects(executor, 'index'),
    async uniqueIndexes (executor) {
      // SQLite's own indexes (primary keys, UNIQUE in a table's definition) have no SQL text.
      const result = await sql<{ name: string, table: string, columns: string }>`select m.name, m.tbl_name as "table",
          (select json_group_array(c.name) from (select name from pragma_index_info(m.name) order by seqno) c) as columns
        from sqlite_master m where m.type = 'index' and m.sql like 'create unique index%'`.execute(executor)
      return result.rows.map(row => ({ ...row, columns: JSON.parse(row.columns) as string[] }))
    },
    triggerNames: async executor => await schemaObjects(executor, 'trigger')
  }
}
