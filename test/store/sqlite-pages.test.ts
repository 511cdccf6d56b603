/**
 * The page size SQLite files are made with (sqlite.ts, PAGE_BYTES): a new
 * file takes it; a file made before, with SQLite's 4096, keeps its own and is
 * served as it was, since the page size of a file in WAL mode cannot change.
 * SQLite only: the PostgreSQL run does not include this file.
 */
import BetterSqlite3 from 'better-sqlite3'
import t from 'tap'
import { ADMIN, body, buildTestApp, testDatabaseFile } from '../helper.js'

function pageSize (file: string): number {
  const database = new BetterSqlite3(file, { readonly: true })
  try {
    return database.pragma('page_size', { simple: true }) as number
  } finally {
    database.close()
  }
}

t.test('a new database file is made with 2048-byte pages', async t => {
  const app = await buildTestApp(t)
  const created = await app.inject({ method: 'POST', url: '/v1/projects', headers: { authorization: ADMIN }, payload: { name: 'first' } })
  t.equal(created.statusCode, 201)
  t.equal(pageSize(testDatabaseFile(t)), 2048)
})

t.test('a file made with 4096-byte pages keeps them, and reads and writes go on as before', async t => {
  const file = testDatabaseFile(t)
  const before = new BetterSqlite3(file)
  before.pragma('journal_mode = WAL')
  before.exec('create table made_before (a integer)')
  before.close()
  t.equal(pageSize(file), 4096, 'SQLite made it with its default')

  const app = await buildTestApp(t)
  const created = await app.inject({ method: 'POST', url: '/v1/projects', headers: { authorization: ADMIN }, payload: { name: 'kept', budget: 12 } })
  t.equal(created.statusCode, 201)
  const patched = await app.inject({
    method: 'PATCH', url: created.headers.location!, headers: { authorization: ADMIN, 'content-type': 'application/merge-patch+json' }, payload: { budget: 15 }
  })
  t.equal(patched.statusCode, 200)
  const read = await app.inject({ url: created.headers.location!, headers: { authorization: ADMIN } })
  t.equal(read.statusCode, 200)
  t.equal(body(read).budget, 15)
  t.equal(pageSize(file), 4096, 'the file still has its own page size')
})
