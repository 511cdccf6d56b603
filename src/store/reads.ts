/**
 * Reads on the read connection: at once where the dialect can, several in one
 * snapshot, or remembered by the change stamp (stamped-cache.ts). An
 * unreachable database is a 503 whichever way, and whenever it is noticed.
 */
import type { CompiledQuery } from 'kysely'
import type { Dialect } from './dialect.js'
import { oncePerTurn, type StampedCache } from './stamped-cache.js'

export interface Reads {
  /** The rows of one query. */
  read: <R>(query: CompiledQuery<R>) => Promise<R[]>
  /** Queries read one after another in one snapshot, so no write lands between them, until `limit` rows are in. Only where the dialect has `inOneSnapshot`. */
  readInTurn: <R>(queries: ReadonlyArray<CompiledQuery<R>>, limit: number) => R[]
  /** `compute`d once per change stamp where the dialect has one, else every time. */
  remembered: <T>(cache: StampedCache<T>, key: string, compute: () => Promise<T>) => Promise<T>
}

export function reads (dialect: Dialect, rethrow: (error: unknown) => never): Reads {
  const { db } = dialect
  const changeStamp = oncePerTurn(() => dialect.changeStamp?.())

  /** The change stamp; an unreachable database is a 503, whether the dialect throws at once (SQLite) or later. */
  async function currentStamp (): Promise<string | undefined> {
    try {
      return await changeStamp()
    } catch (error) {
      return rethrow(error)
    }
  }

  return {
    async read (query) {
      try {
        return dialect.readAtOnce?.(query) ?? (await db.executeQuery(query)).rows
      } catch (error) {
        return rethrow(error)
      }
    },

    readInTurn<R> (queries: ReadonlyArray<CompiledQuery<R>>, limit: number): R[] {
      try {
        return dialect.inOneSnapshot!(() => {
          const rows: R[] = []
          for (const query of queries) {
            rows.push(...dialect.readAtOnce!(query))
            if (rows.length >= limit) break
          }
          return rows.slice(0, limit)
        })
      } catch (error) {
        return rethrow(error)
      }
    },

    async remembered (cache, key, compute) {
      // Read before computing: a write in between makes the stamp stale, never the answer.
      const stamp = await currentStamp()
      return stamp === undefined ? await compute() : await cache.remember(key, stamp, compute)
    }
  }
}
