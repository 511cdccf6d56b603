/**
 * SQLite prepares each page statement once. A bare `LIMIT ?` makes SQLite
 * read the bound limit while preparing and prepare the statement again each
 * time a new value is bound, which better-sqlite3 does on every run: a whole
 * prepare per page read (sqlite-compiler.ts). Every query a page sends must
 * therefore bind its limit behind a unary plus, and still return exactly that
 * many rows. SQLite only: the PostgreSQL run does not include this file.
 */
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { cursorCodec } from '../../src/resources/cursor.js'
import { parseListQuery } from '../../src/resources/query.js'
import { recordingStore } from '../support/recording-store.js'

t.test('every page query binds its limit as an expression SQLite does not re-prepare for', async t => {
  const { store, sent, model } = await recordingStore(t)
  const projects = model.get('projects')!
  const tasks = model.get('tasks')!
  const project = await store.insert(projects, { name: 'p', active: true, tags: [], description: undefined, budget: undefined })
  for (let i = 1; i <= 7; i++) await store.insert(tasks, { name: `t${i}`, projectId: project.id, status: 'todo', priority: 1 + (i % 5), dueDate: i % 2 === 0 ? '2026-01-01' : undefined, assignee: undefined })
  const cursors = cursorCodec(randomBytes(32))
  // Typed as the query schema leaves them: limit and page are numbers by then.
  const pages: Array<Record<string, string | number>> = [
    { limit: 3 },
    { limit: 3, page: 2 },
    { limit: 3, sort: '-priority', filter: 'active' },
    { limit: 3, sort: 'dueDate', cursor: '' },
    { limit: 3, sort: 'dueDate', cursor: cursors.encode({ sort: 'dueDate,id', values: ['2026-01-01', 4] }) }
  ]
  for (const raw of pages) {
    sent.length = 0
    const rows = await store.list(tasks, parseListQuery(tasks, raw, { now: new Date(), cursors }).store)
    const label = Object.entries(raw).map(([name, value]) => `${name}=${name === 'cursor' && value !== '' ? '…' : value}`).join('&')
    t.ok(rows.length >= 3, `${label}: the page is full (${rows.length} rows, the limit and one to tell whether more follow)`)
    t.ok(rows.length <= 4, `${label}: no more rows than the limit and one`)
    const limited = sent.filter(query => /\blimit\b/i.test(query.sql))
    t.ok(limited.length > 0, `${label}: sent a limited query`)
    for (const query of limited) t.match(query.sql, /\blimit \+\?/, `${label}: ${query.sql}`)
  }
})
