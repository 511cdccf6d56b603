/**
 * How the admin collections (API keys, OAuth clients, webhook subscriptions)
 * are read: a page of their live items in id order, how many there are, and
 * one by id. Each is one query, so no answer reads the whole table, however
 * many credentials a deployment has issued.
 */
import type { Kysely, SelectQueryBuilder } from 'kysely'
import type { Database } from './dialect.js'
import { countOf, countValue } from './row-counts.js'

/** A page of a list: `limit` items after the first `offset`. */
export interface Window {
  readonly offset: number
  readonly limit: number
}

export interface LiveItems<T> {
  /** The live items in id order: all of them, or those in `window`. */
  list (window?: Window): Promise<T[]>
  /** How many live items there are. */
  count (): Promise<number>
  /** The live item with this id, if there is one. */
  get (id: number): Promise<T | undefined>
}

type Row = Record<string, unknown>

/**
 * `table`'s items read through `view`; with `unrevoked`, only the rows whose
 * `revokedAt` is not set are live (credentials are kept once revoked, so that
 * a revoked key is told apart from an unknown one).
 */
export function liveItems<T> (db: Kysely<Database>, table: string, view: (row: Row) => T, unrevoked: boolean): LiveItems<T> {
  const live = <O>(query: SelectQueryBuilder<Database, string, O>): SelectQueryBuilder<Database, string, O> =>
    unrevoked ? query.where('revokedAt', 'is', null) : query
  return {
    async list (window) {
      const ordered = live(db.selectFrom(table).selectAll().orderBy('id'))
      const rows = await (window === undefined ? ordered : ordered.limit(window.limit).offset(window.offset)).execute()
      return rows.map(view)
    },
    count: async () => countValue(await live(countOf(db, table)).executeTakeFirst()),
    async get (id) {
      const row = await live(db.selectFrom(table).selectAll().where('id', '=', id)).executeTakeFirst()
      return row === undefined ? undefined : view(row)
    }
  }
}
