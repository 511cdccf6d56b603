/**
 * Named prepared statements on PostgreSQL. pg sends a statement with
 * parameters unnamed unless told otherwise, and the server parses and plans
 * an unnamed statement every time it runs; a named one is parsed once per
 * connection and then only bound and executed. With 100,000 tasks, in
 * interleaved runs on one machine, that took GET one from 6,900–7,900 to
 * 8,500–9,000 requests a second, POST from 1,850–1,900 to 2,300–2,600 and
 * PATCH from 1,800 to 2,450–2,700.
 *
 * Only statements that name their result columns are prepared. One with a
 * `*` in its select list or RETURNING would take in a column that another
 * process adds (a newer version's additive migration during a rolling
 * deploy), and PostgreSQL refuses to run a prepared statement whose result
 * changed shape ("cached plan must not change result type"). The engine's
 * hot statements name their columns (RowCodec.columns); the others run
 * unnamed, as before. A connection prepares at most PREPARED_PER_CONNECTION
 * texts, the first it meets (the hot ones come first and stay): each holds
 * about 25 KB of the server's memory with its plan (measured on PostgreSQL
 * 15), and shapes that vary without bound, such as an `in` list's length,
 * must not fill it. The rest run unnamed.
 */
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import type pg from 'pg'

export const PREPARED_PER_CONNECTION = 100

/** `count(*)` names its one result column; any other `*` does not. */
export function namesItsColumns (text: string): boolean {
  return !text.replace(/count\(\*\)/gi, '').includes('*')
}

/** "cached plan must not change result type", and any other refusal of a statement's saved form. */
const FEATURE_NOT_SUPPORTED = '0A000'

function preparingClient (client: pg.PoolClient): PostgresPoolClient {
  // Per connection: a statement name lives in one server session.
  const names = new Map<string, string>()
  let prepared = 0
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text)
    if (known !== undefined || names.size >= PREPARED_PER_CONNECTION || !namesItsColumns(text)) return known
    const name = `resourcery_${prepared++}`
    names.set(text, name)
    return name
  }
  /**
   * A statement whose result no longer fits what was prepared (a column's
   * type changed by hand under a running service) would fail on every run
   * for the life of the connection. It fails once: the next run prepares it
   * anew, under a new name, as pg keeps the old one bound to its text.
   */
  const forgetRefused = (text: string) => (error: unknown): never => {
    if ((error as { code?: unknown }).code === FEATURE_NOT_SUPPORTED) names.delete(text)
    throw error
  }
  function query<R> (text: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>
  function query<R> (cursor: PostgresCursor<R>): PostgresCursor<R>
  function query<R> (statement: string | PostgresCursor<R>, parameters: readonly unknown[] = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // A cursor (Kysely's stream()) is pg's to run as it is.
    if (typeof statement !== 'string') return client.query(statement as unknown as pg.Submittable) as unknown as PostgresCursor<R>
    // A statement without parameters goes by the simple protocol, which has no plan to keep.
    const name = parameters.length === 0 ? undefined : nameOf(statement)
    // Kysely hands over an array of its own; pg only reads it.
    const values = parameters as unknown[]
    const result = name === undefined ? client.query(statement, values) : client.query({ name, text: statement, values }).catch(forgetRefused(statement))
    return result as unknown as Promise<PostgresQueryResult<R>>
  }
  return { query, release: (destroy?: boolean) => { client.release(destroy) } }
}

/** `pool` for Kysely, each of its connections preparing what it runs. */
export function preparingPool (pool: pg.Pool): PostgresPool {
  // Kysely keeps its state per client object: one wrapper per connection, for as long as it lives.
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  return {
    async connect () {
      const client = await pool.connect()
      let preparing = wrapped.get(client)
      if (preparing === undefined) {
        preparing = preparingClient(client)
        wrapped.set(client, preparing)
      }
      return preparing
    },
    async end () { await pool.end() }
  }
}
