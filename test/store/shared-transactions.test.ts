/**
 * Shared transactions (src/store/shared-transactions.ts) on a real
 * PostgreSQL server: the jobs of one turn run on one transaction and settle
 * once it has committed; a job that fails, or a commit the server refuses,
 * leaves nothing of the shared transaction, and every job's answer is the
 * one it gets in a transaction where it was alone or all succeeded.
 */
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/store/dialect.js'
import { openPostgres } from '../../src/store/postgres.js'
import { sharedTransactions } from '../../src/store/shared-transactions.js'
import { freshSchema, TEST_POSTGRES_URL } from '../helper.js'
import { answers } from '../support/tcp-proxy.js'

const skip = await answers(Number(new URL(TEST_POSTGRES_URL).port || 5432))
  ? false
  : `PostgreSQL is not reachable at ${TEST_POSTGRES_URL}; start it to run this test (CI always has it)`

/** A pool on a fresh schema with two tables: items, and marks that must name an item by the time they commit. */
async function database (t: Test): Promise<Kysely<Database>> {
  const dialect = openPostgres({ url: await freshSchema(t), poolSize: 4, timeoutMs: 5000, prepare: false })
  t.teardown(async () => { await dialect.db.destroy() })
  await sql`create table items (id integer primary key, label text not null)`.execute(dialect.db)
  await sql`create table marks (item integer not null references items (id) deferrable initially deferred)`.execute(dialect.db)
  return dialect.db
}

const SERVER_REFUSED = (error: unknown): boolean => (error as { severity?: string }).severity === 'ERROR'

/** A job that adds item `id` and answers with the transaction it ran in; `runs` counts its runs, `transactions` where each ran. */
function adding (id: number, runs: Map<number, unknown[]>, then?: (trx: Kysely<Database>) => Promise<void>) {
  return async (trx: Kysely<Database>): Promise<string> => {
    const { rows } = await sql<{ txid: string }>`insert into items (id, label) values (${id}, ${`item ${id}`}) returning txid_current()::text as txid`.execute(trx)
    const txid = rows[0]!.txid
    runs.set(id, [...runs.get(id) ?? [], txid])
    await then?.(trx)
    return txid
  }
}

const stored = async (db: Kysely<Database>): Promise<number[]> =>
  (await sql<{ id: number }>`select id from items order by id`.execute(db)).rows.map(row => row.id)

t.test('the jobs of one turn share one transaction, and each settles once it has committed', { skip }, async t => {
  const db = await database(t)
  const shared = sharedTransactions(db, SERVER_REFUSED)
  const runs = new Map<number, unknown[]>()
  const settled: number[] = []
  const answered = await Promise.all([1, 2, 3].map(async id => {
    const txid = await shared.run(adding(id, runs))
    // Committed by the time it is answered: another connection of the pool sees every item of the turn.
    settled.push((await stored(db)).length)
    return txid
  }))
  t.equal(new Set(answered).size, 1, 'one transaction for the three')
  t.same(settled, [3, 3, 3], 'each answered after the commit')
  t.same(await stored(db), [1, 2, 3])

  // A later turn gets a transaction of its own; a job alone in its turn too.
  const later = await shared.run(adding(4, runs))
  t.not(later, answered[0], 'a later turn: another transaction')
  t.same(await stored(db), [1, 2, 3, 4])
})

t.test('a job that fails leaves nothing of the shared transaction: it fails alone, the others commit once together', { skip }, async t => {
  const db = await database(t)
  const shared = sharedTransactions(db, SERVER_REFUSED)
  const runs = new Map<number, unknown[]>()
  const failing = adding(12, runs, async () => { throw new Error('refused after writing') })
  const outcomes = await Promise.allSettled([shared.run(adding(11, runs)), shared.run(failing), shared.run(adding(13, runs))])
  t.same(outcomes.map(outcome => outcome.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.equal((outcomes[1] as PromiseRejectedResult).reason.message, 'refused after writing', 'the failure is its own')
  t.same(await stored(db), [11, 13], 'the failed job\'s item is not kept, the others\' once each')
  t.equal(runs.get(12)!.length, 2, 'the failed job ran again, alone')
  const [first11, again11] = runs.get(11)!
  const [first13, again13] = runs.get(13)!
  t.equal(first11, first13, 'the first run: all three together')
  t.equal(again11, again13, 'the others ran again in one more shared transaction')
  t.not(again11, first11)
  t.not(runs.get(12)![1], again11, 'apart from the failed one')

  // One that fails in the second shared transaction: then each of that one runs alone.
  const runsAgain = new Map<number, unknown[]>()
  let calls = 0
  const failingSecond = adding(22, runsAgain, async () => { if (++calls === 2) throw new Error('not this time') })
  const rejected = adding(21, runsAgain, async () => { throw new Error('never') })
  const second = await Promise.allSettled([shared.run(rejected), shared.run(failingSecond), shared.run(adding(23, runsAgain))])
  t.same(second.map(outcome => outcome.status), ['rejected', 'fulfilled', 'fulfilled'], 'the second shared run failed too; then each answered alone')
  t.same(runsAgain.get(22)!.length, 3)
  t.same(await stored(db), [11, 13, 22, 23])
  const [, , alone22] = runsAgain.get(22)!
  const [, , alone23] = runsAgain.get(23)!
  t.not(alone22, alone23, 'the third runs were each alone')
})

t.test('a commit the server refuses is run again job by job, each to its own answer', { skip }, async t => {
  const db = await database(t)
  const shared = sharedTransactions(db, SERVER_REFUSED)
  const runs = new Map<number, unknown[]>()
  // A mark of an item that does not exist: the deferred key refuses it only at the commit.
  const dangling = adding(32, runs, async trx => { await sql`insert into marks (item) values (999)`.execute(trx) })
  const outcomes = await Promise.allSettled([shared.run(adding(31, runs)), shared.run(dangling), shared.run(adding(33, runs))])
  t.same(outcomes.map(outcome => outcome.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.match((outcomes[1] as PromiseRejectedResult).reason, { code: '23503' }, 'the refusal is the dangling job\'s alone')
  t.same(await stored(db), [31, 33])
  const seconds = [31, 32, 33].map(id => runs.get(id)![1])
  t.equal(new Set(seconds).size, 3, 'after the refused commit, each ran in a transaction of its own')
})
