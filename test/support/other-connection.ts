/**
 * Another connection to the test's database, as another process or a script
 * would have: writes that bypass the service, and counts taken the slow way to
 * hold the service's counts to the truth.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import BetterSqlite3 from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import type { Test } from 'tap'
import { ON_POSTGRES, testDatabaseUrl } from '../helper.js'

export interface OtherConnection {
  run (statement: string): Promise<void>
  /** The table's rows (those matching `condition`, SQL), counted the slow way. */
  count (table: string, condition?: string): Promise<number>
}

export async function otherConnection (t: Test): Promise<OtherConnection> {
  const url = await testDatabaseUrl(t)
  const counting = (table: string, condition?: string): string => `select count(*) as n from ${table}${condition === undefined ? '' : ` where ${condition}`}`
  if (!ON_POSTGRES) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length))
    db.pragma('foreign_keys = ON')
    db.pragma('busy_timeout = 5000')
    t.teardown(() => db.close())
    return {
      async run (statement) {
        db.exec(statement)
        // The service reads a turn of the event loop in one snapshot (turn-snapshot.ts): another process's
        // commit reaches the requests of its next turn, where a script's write and a request after it fall.
        await nextTurn()
      },
      async count (table, condition) { return Number(db.prepare(counting(table, condition)).pluck().get()) }
    }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.teardown(async () => { await client.end() })
  return {
    async run (statement) { await client.query(statement) },
    async count (table, condition) { return Number((await client.query(counting(table, condition))).rows[0].n) }
  }
}

/** The X-Total-Count of a list. */
export async function totalCount (app: FastifyInstance, url: string): Promise<number> {
  const response = await app.inject({ method: 'GET', url })
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${response.body}`)
  return Number(response.headers['x-total-count'])
}
