/**
 * SQLite's reads of one turn of the event loop share one read transaction
 * (turn-snapshot.ts): one read lock a turn instead of one a read. These tests
 * hold it to what must not change: a write of the service is seen by every
 * read after it is acknowledged, also a read in the same turn; the snapshot
 * ends with the turn, so another process's commit is seen from the next turn
 * on and an idle service holds no read lock (which would keep a checkpoint
 * from emptying the WAL). SQLite only: the PostgreSQL run does not include
 * this file.
 */
import { randomBytes } from 'node:crypto'
import { setImmediate as nextTurn } from 'node:timers/promises'
import BetterSqlite3 from 'better-sqlite3'
import t from 'tap'
import { cursorCodec } from '../../src/resources/cursor.js'
import { parseListQuery } from '../../src/resources/query.js'
import { turnSnapshot } from '../../src/store/turn-snapshot.js'
import { testDatabaseFile } from '../helper.js'
import { recordingStore } from '../support/recording-store.js'

t.test('the reads of one turn see one state of the data, and the next turn a new one', async t => {
  const file = testDatabaseFile(t)
  const reading = new BetterSqlite3(file)
  reading.pragma('journal_mode = WAL')
  const writing = new BetterSqlite3(file)
  t.teardown(() => { reading.close(); writing.close() })
  writing.exec('create table items (id integer primary key)')
  const turn = turnSnapshot(reading)
  const count = reading.prepare('select count(*) from items').pluck()
  const items = (): unknown => {
    turn.join()
    return count.get()
  }

  t.equal(items(), 0)
  t.ok(reading.inTransaction, 'the first read of the turn begins a read transaction')
  writing.exec('insert into items default values')
  t.equal(items(), 0, 'a later read of the same turn reads the same snapshot')
  await nextTurn()
  t.notOk(reading.inTransaction, 'the transaction ends with the turn')
  t.equal(items(), 1, 'the next turn reads what was committed meanwhile')
  writing.exec('insert into items default values')
  turn.end()
  t.equal(items(), 2, 'ending the snapshot (as a write of the service does) makes the next read see the commit')
  await nextTurn()
  t.notOk(reading.inTransaction, 'an idle connection holds no read lock')
  const checkpoint = writing.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>
  t.equal(checkpoint[0]!.busy, 0, 'so a checkpoint empties the WAL')
})

t.test('a read after a write is acknowledged sees it, in the same turn as a read before it', async t => {
  const { store, model } = await recordingStore(t)
  const projects = model.get('projects')!
  const tasks = model.get('tasks')!
  const project = await store.insert(projects, { name: 'p', active: true, tags: [], description: undefined, budget: undefined })
  const page = parseListQuery(tasks, { limit: 10 }, { now: new Date(), cursors: cursorCodec(randomBytes(32)) }).store
  const task = { name: 'a', projectId: project.id, status: 'todo', priority: 1, dueDate: undefined, assignee: undefined }
  // From a turn of its own: the write's group commit is queued for the end of the turn before the read's snapshot ends.
  await nextTurn()
  const creating = store.insert(tasks, task)
  t.equal((await store.list(tasks, page)).length, 0, 'a read while the write is under way sees the data before it')
  const created = await creating
  t.same((await store.list(tasks, page)).map(row => row.id), [created.id], 'the read after the acknowledgement sees the record')
  t.equal((await store.get(tasks, created.id))?.version, 1, 'and so does a read of the record itself')
  await nextTurn()
  const updating = store.update(tasks, created.id, () => ({ ...task, priority: 5 }))
  t.equal((await store.get(tasks, created.id))?.values.priority, 1)
  await updating
  t.equal((await store.get(tasks, created.id))?.values.priority, 5, 'an update is seen by the read after it')
})
