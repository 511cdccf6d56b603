/**
 * The example model's store on the test's database (SQLite, or PostgreSQL in
 * the PostgreSQL run), recording every query it sends through its reading
 * connection (on PostgreSQL, its only one), through Kysely or at once: what a
 * test plans or counts is what runs.
 */
import type { CompiledQuery } from 'kysely'
import type { Test } from 'tap'
import { resources } from '../../schemas/index.js'
import { buildModel, type Model } from '../../src/resources/model.js'
import type { Dialect } from '../../src/store/dialect.js'
import { openPostgres } from '../../src/store/postgres.js'
import { createSqlStore } from '../../src/store/sql-store.js'
import { openSqlite } from '../../src/store/sqlite.js'
import type { Store } from '../../src/store/store.js'
import { ON_POSTGRES, testDatabaseUrl } from '../helper.js'

export interface RecordingStore {
  readonly store: Store
  readonly dialect: Dialect
  /** The queries sent so far; a test empties it before the step it looks at. */
  readonly sent: CompiledQuery[]
  /** How many times the store has read the change stamp (on SQLite past the executor too). */
  readonly stampReads: { count: number }
  /**
   * The change stamps read, as the store got them (on PostgreSQL, promises). A test empties it with `sent`.
   * PostgreSQL's stamp moves with every commit on the server, another test file's included.
   */
  readonly stamps: unknown[]
  readonly model: Model
}

export async function recordingStore (t: Test): Promise<RecordingStore> {
  const url = await testDatabaseUrl(t)
  const dialect: Dialect = ON_POSTGRES
    ? openPostgres({ url, poolSize: 2, timeoutMs: 5000, prepare: true })
    : openSqlite({ file: url.slice('sqlite:'.length), synchronous: 'NORMAL' })
  // At the executor, which both compiled queries and query builders run through.
  const sent: CompiledQuery[] = []
  const executor = dialect.db.getExecutor()
  const execute = executor.executeQuery.bind(executor)
  executor.executeQuery = async query => {
    sent.push(query)
    return await execute(query)
  }
  // And where the dialect reads at once, past the executor (SQLite's reader).
  const readAtOnce = dialect.readAtOnce?.bind(dialect)
  const stampReads = { count: 0 }
  const stamps: unknown[] = []
  const changeStamp = dialect.changeStamp?.bind(dialect)
  const recordStamp = <S>(stamp: S): S => {
    stampReads.count++
    stamps.push(stamp)
    return stamp
  }
  const recorded: Dialect = {
    ...dialect,
    ...(readAtOnce === undefined ? {} : { readAtOnce: query => { sent.push(query); return readAtOnce(query) } }),
    ...(changeStamp === undefined ? {} : { changeStamp: () => recordStamp(changeStamp()) })
  }
  const model = buildModel(resources)
  const store = createSqlStore(recorded, model, { apiKeyCacheMs: 0 })
  t.teardown(async () => { await store.close() })
  await store.migrate()
  return { store, dialect, sent, stampReads, stamps, model }
}
