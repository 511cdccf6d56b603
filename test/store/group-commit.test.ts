/**
 * The group-commit writer's `afterCommit` (group-commit.ts): it runs once for
 * each group that reached the disk, when the group's rows are visible to the
 * other connection, and never for a group whose commit failed. SQLite releases the
 * read connection's pages there (sqlite.ts). SQLite only: PostgreSQL gives
 * each write a transaction of its own.
 */
import { CompiledQuery, sql } from 'kysely'
import t from 'tap'
import { groupCommitWriter } from '../../src/store/group-commit.js'
import { openSqlite } from '../../src/store/sqlite.js'
import { SQLITE_ONLY, testDatabaseFile } from '../helper.js'

t.test('afterCommit runs once per committed group, once its rows are visible, and not after a failed commit', { skip: SQLITE_ONLY }, async t => {
  const dialect = openSqlite({ file: testDatabaseFile(t), synchronous: 'NORMAL' })
  const db = dialect.writer.db
  t.teardown(async () => { await db.destroy(); await dialect.db.destroy() })
  await sql`create table parents (id integer primary key)`.execute(db)
  // A deferred key is checked at COMMIT, not by the write: the one way a group's commit itself fails.
  await sql`create table children (id integer primary key, parent integer references parents (id) deferrable initially deferred)`.execute(db)
  await sql`insert into parents (id) values (1)`.execute(db)

  // What the read connection sees, read at once (synchronously) from inside the callback.
  const children = CompiledQuery.raw('select count(*) as n from children')
  const visible = (): number => (dialect.readAtOnce!(children) as Array<{ n: number }>)[0]!.n
  const calls: number[] = []
  const writer = groupCommitWriter(db, () => { calls.push(visible()) })
  const insert = async (id: number, parent: number): Promise<void> => {
    await writer.run(async trx => { await sql`insert into children (id, parent) values (${id}, ${parent})`.execute(trx) })
  }

  // Three writes in one turn of the event loop: one group. One of them fails alone (a duplicate id) and the group still commits.
  const outcomes = await Promise.allSettled([insert(1, 1), insert(2, 1), insert(1, 1)])
  t.same(outcomes.map(outcome => outcome.status), ['fulfilled', 'fulfilled', 'rejected'], 'the duplicate alone failed')
  t.same(calls, [2], 'one call, with both acknowledged rows already visible to the reader')

  const failed = await Promise.allSettled([insert(3, 1), insert(4, 999)])
  t.same(failed.map(outcome => outcome.status), ['rejected', 'rejected'], 'a failed commit fails every write of its group')
  t.same(calls, [2], 'and is not followed by afterCommit')
  const stored = await sql<{ id: number }>`select id from children order by id`.execute(db)
  t.same(stored.rows.map(row => row.id), [1, 2], 'nothing of the failed group is stored')

  await insert(5, 1)
  t.same(calls, [2, 3], 'the next group commits and calls it again')
})
