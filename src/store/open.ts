/** DATABASE_URL → the Store for that database. */
import type { Model } from '../resources/model.js'
import { createSqlStore } from './sql-store.js'
import { openSqlite, type SqliteSynchronous } from './sqlite.js'
import type { Store } from './store.js'

export interface StoreOptions {
  readonly databaseUrl: string
  readonly sqliteSynchronous: SqliteSynchronous
}

/** `sqlite:./data/app.db`, `sqlite:/abs/path.db`, `sqlite:///abs/path.db`, `sqlite::memory:`. */
export function sqliteFile (databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length)
  return rest.startsWith('//') ? rest.slice(2) : rest
}

export function openStore (model: Model, options: StoreOptions): Store {
  if (options.databaseUrl.startsWith('sqlite:')) {
    return createSqlStore(openSqlite({ file: sqliteFile(options.databaseUrl), synchronous: options.sqliteSynchronous }), model)
  }
  throw new Error(`DATABASE_URL ${options.databaseUrl.replace(/\/\/[^@/]*@/, '//…@')} is not supported: use sqlite:<file>`)
}
