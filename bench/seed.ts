/**
 * Seeds a benchmark database: the engine creates the tables (so they are
 * exactly what the service uses), then rows are bulk-inserted in one
 * transaction, which is far faster than going through HTTP.
 */
import BetterSqlite3 from 'better-sqlite3'
import { resources } from '../schemas/index.js'
import { buildModel } from '../src/resources/model.js'
import { openStore } from '../src/store/open.js'

export async function seed (file: string, projects: number, tasks: number): Promise<void> {
  const store = await openStore(buildModel(resources), { databaseUrl: `sqlite:${file}`, sqliteSynchronous: 'NORMAL' })
  await store.migrate()
  await store.close()
  const db = new BetterSqlite3(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = OFF')
  const now = new Date().toISOString()
  const project = db.prepare('insert into projects (version, createdAt, updatedAt, name, active, budget, tags) values (1, ?, ?, ?, ?, ?, ?)')
  const task = db.prepare('insert into tasks (version, createdAt, updatedAt, name, projectId, status, priority, dueDate) values (1, ?, ?, ?, ?, ?, ?, ?)')
  const statuses = ['todo', 'doing', 'done']
  db.transaction(() => {
    for (let i = 1; i <= projects; i++) project.run(now, now, `project ${i}`, i % 4 === 0 ? 0 : 1, i * 10, '[]')
    for (let i = 1; i <= tasks; i++) {
      task.run(now, now, `task ${i}`, (i % projects) + 1, statuses[i % 3], (i % 5) + 1, i % 7 === 0 ? null : `2026-${String((i % 12) + 1).padStart(2, '0')}-15`)
    }
  })()
  db.close()
}
