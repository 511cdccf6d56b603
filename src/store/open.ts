/** DATABASE_URL → the Store for that database. */
import { parseDuration } from '../duration.js'
import type { Model } from '../resources/model.js'
import { createSqlStore } from './sql-store.js'
import { openSqlite, type SqliteSynchronous } from './sqlite.js'
import type { Dialect } from './dialect.js'
import { DatabaseUnreachable, type Store } from './store.js'

export interface StoreOptions {
  readonly databaseUrl: string
  readonly sqliteSynchronous: SqliteSynchronous
  readonly databasePoolSize?: number
  readonly databaseTimeoutMs?: number
  /** PostgreSQL: `1` (the default) prepares the hot statements once per connection (DATABASE_PREPARED_STATEMENTS). */
  readonly databasePreparedStatements?: '0' | '1'
  /** `5s`, `0`…: how long a looked-up API key is reused (API_KEY_CACHE_TTL). */
  readonly apiKeyCacheTtl?: string
}

/** `sqlite:./data/app.db`, `sqlite:/abs/path.db`, `sqlite:///abs/path.db`, `sqlite::memory:`. */
export function sqliteFile (databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length)
  return rest.startsWith('//') ? rest.slice(2) : rest
}

async function openDialect (options: StoreOptions): Promise<Dialect> {
  if (options.databaseUrl.startsWith('sqlite:')) return openSqlite({ file: sqliteFile(options.databaseUrl), synchronous: options.sqliteSynchronous })
  // pg is loaded only when it is used: a process on SQLite does not carry it in memory.
  return (await import('./postgres.js')).openPostgres({
    url: options.databaseUrl,
    poolSize: options.databasePoolSize ?? 10,
    timeoutMs: options.databaseTimeoutMs ?? 5000,
    prepare: options.databasePreparedStatements !== '0'
  })
}

/**
 * The Store for DATABASE_URL, once its database answers. A file that cannot
 * be created or a server that refuses (down, wrong password, no such
 * database) is a DatabaseUnreachable naming DATABASE_URL, not a stack trace.
 */
export async function openStore (model: Model, options: StoreOptions): Promise<Store> {
  let store: Store
  try {
    store = createSqlStore(await openDialect(options), model, { apiKeyCacheMs: (parseDuration(options.apiKeyCacheTtl ?? '5s') ?? 5) * 1000 })
  } catch (error) {
    throw new DatabaseUnreachable(options.databaseUrl, error)
  }
  try {
    await store.ping()
  } catch (error) {
    await store.close()
    throw new DatabaseUnreachable(options.databaseUrl, error)
  }
  return store
}
