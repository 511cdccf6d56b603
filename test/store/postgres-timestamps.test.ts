/**
 * PostgreSQL's timestamptz text, read straight into the API's form when the
 * session prints UTC (src/store/postgres.ts, timestampFromText), and through
 * pg's own parser otherwise: the same instant either way. The round trip
 * through a real server runs where one answers.
 */
import pg from 'pg'
import t from 'tap'
import { sql } from 'kysely'
import { openPostgres, timestampFromText } from '../../src/store/postgres.js'
import { TEST_POSTGRES_URL } from '../helper.js'
import { answers } from '../support/tcp-proxy.js'

const iso = (value: string | Date): string => typeof value === 'string' ? value : value.toISOString()

t.test('UTC text becomes RFC 3339 with milliseconds without a Date; anything else is pg\'s Date of the same instant', async t => {
  const utc: Array<[string, string]> = [
    ['2026-11-27 09:20:00.123+00', '2026-11-27T09:20:00.123Z'],
    ['2026-11-27 09:20:00+00', '2026-11-27T09:20:00.000Z'],
    ['2026-11-27 09:20:00.1+00', '2026-11-27T09:20:00.100Z'],
    ['2026-11-27 09:20:00.12+00', '2026-11-27T09:20:00.120Z'],
    ['2026-11-27 09:20:00.123999+00', '2026-11-27T09:20:00.123Z'],
    ['0001-01-01 00:00:00+00', '0001-01-01T00:00:00.000Z']
  ]
  for (const [text, expected] of utc) t.equal(timestampFromText(text), expected, text)
  const offsets: Array<[string, string]> = [
    ['2026-11-27 10:20:00.123+01', '2026-11-27T09:20:00.123Z'],
    ['2026-11-27 04:50:00.5-04:30', '2026-11-27T09:20:00.500Z']
  ]
  for (const [text, expected] of offsets) {
    const value = timestampFromText(text)
    t.type(value, Date, `${text}: another offset is pg's to read`)
    t.equal(iso(value), expected, `${text}: the same instant`)
  }
})

const skip = await answers(Number(new URL(TEST_POSTGRES_URL).port || 5432))
  ? false
  : `PostgreSQL is not reachable at ${TEST_POSTGRES_URL}; start it to run this test (CI always has it)`

t.test('what a server prints, in UTC and in another time zone, reads as the instant stored', { skip }, async t => {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await client.connect()
  t.teardown(async () => { await client.end() })
  const stored = ['2026-11-27T09:20:00.123Z', '2026-01-01T00:00:00.000Z', '1999-12-31T23:59:59.999Z']
  for (const zone of ['UTC', 'Asia/Kolkata']) {
    await client.query(`set time zone '${zone}'`)
    const { rows } = await client.query<{ text: string }>('select value::timestamptz::text as text from unnest($1::text[]) with ordinality as v(value, n) order by n', [stored])
    t.same(rows.map(row => iso(timestampFromText(row.text))), stored, `session in ${zone}`)
  }
})

t.test('the service\'s sessions print UTC even where the server\'s own zone is another, so timestamps take the text path', { skip }, async t => {
  // A server set to another zone, as its sessions see it: the zone given as the connection's default.
  const url = new URL(TEST_POSTGRES_URL)
  url.searchParams.set('options', '-c TimeZone=Asia/Kolkata')
  const client = new pg.Client({ connectionString: url.toString() })
  await client.connect()
  t.teardown(async () => { await client.end() })
  t.equal((await client.query<{ TimeZone: string }>('show time zone')).rows[0]!.TimeZone, 'Asia/Kolkata', 'a plain session keeps the server\'s zone')

  const dialect = openPostgres({ url: url.toString(), poolSize: 2, timeoutMs: 5000, prepare: true })
  t.teardown(async () => { await dialect.db.destroy() })
  // Both connections of the pool, taken at once.
  const zones = await Promise.all([0, 1].map(async () => (await sql<{ TimeZone: string }>`show time zone`.execute(dialect.db)).rows[0]!.TimeZone))
  t.same(zones, ['UTC', 'UTC'])
  const { rows } = await sql<{ at: unknown }>`select ${'2026-11-27T09:20:00.123Z'}::timestamptz as at`.execute(dialect.db)
  t.equal(rows[0]!.at, '2026-11-27T09:20:00.123Z', 'read as text, in the API\'s form')
})
