/** DATABASE_URL → the Store for that database. */
import { parseDuration } from '../duration.js'
import type { Model } from '../resources/model.js'
import { createSqlStore } from './sql-store.js'
import { openSqlite, type SqliteSynchronous } from './sqlite.js'
import type { Store } from './store.js'

export interface StoreOptions {
  readonly databaseUrl: string
  readonly sqliteSynchronous: SqliteSynchronous
  readonly databasePoolSize?: number
  readonly databaseTimeoutMs?: number
  /** `5s`, `0`…: how long a looked-up API key is reused (API_KEY_CACHE_TTL). */
  readonly apiKeyCacheTtl?: string
}

/** `sqlite:./data/app.db`, `sqlite:/abs/path.db`, `sqlite:///abs/path.db`, `sqlite::memory:`. */
export function sqliteFile (databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length)
  return rest.startsWith('//') ? rest.slice(2) : rest
}

export async function openStore (model: Model, options: StoreOptions): Promise<Store> {
  // pg is loaded only when it is used: a process on SQLite does not carry it in memory.
  const dialect = options.databaseUrl.startsWith('sqlite:')
    ? openSqlite({ file: sqliteFile(options.databaseUrl), synchronous: options.sqliteSynchronous })
    : (await import('./postgres.js')).openPostgres({ url: options.databaseUrl, poolSize: options.databasePoolSize ?? 10, timeoutMs: options.databaseTimeoutMs ?? 5000 })
  return createSqlStore(dialect, model, { apiKeyCacheMs: (parseDuration(options.apiKeyCacheTtl ?? '5s') ?? 5) * 1000 })
}
