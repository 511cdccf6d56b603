/**
 * Seeds a benchmark database: the engine creates the tables (so they are
 * exactly what the service uses), then rows are bulk-inserted in one
 * transaction, which is far faster than going through HTTP. SQLite and
 * PostgreSQL get the same rows: task i belongs to project (i mod projects) + 1,
 * has status todo / doing / done by i mod 3, priority (i mod 5) + 1, and is due
 * on the 15th of month (i mod 12) + 1 of 2026 unless i is a multiple of 7;
 * every fourth project is inactive.
 */
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { resources } from '../schemas/index.js'
import { buildModel } from '../src/resources/model.js'
import { openStore } from '../src/store/open.js'

/** How many projects every bench seeds, whatever its number of tasks. */
export const PROJECTS = 10_000

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

/** The same rows on PostgreSQL, at DATABASE_URL `url` (a schema of its own, by its search_path). */
export async function seedPostgres (url: string, projects: number, tasks: number): Promise<void> {
  const store = await openStore(buildModel(resources), { databaseUrl: url, sqliteSynchronous: 'NORMAL' })
  await store.migrate()
  await store.close()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('begin')
    await client.query(`insert into projects (version, "createdAt", "updatedAt", name, active, budget, tags)
      select 1, now(), now(), 'project ' || i, i % 4 <> 0, i * 10, '[]'::jsonb from generate_series(1, $1::int) as i`, [projects])
    await client.query(`insert into tasks (version, "createdAt", "updatedAt", name, "projectId", status, priority, "dueDate")
      select 1, now(), now(), 'task ' || i, i % $2::int + 1, (array['todo', 'doing', 'done'])[i % 3 + 1], i % 5 + 1,
        case when i % 7 = 0 then null else '2026-' || lpad((i % 12 + 1)::text, 2, '0') || '-15' end
      from generate_series(1, $1::int) as i`, [tasks, projects])
    await client.query('commit')
    // Statistics for the planner, and the visibility map for index-only scans, as a live database would have.
    await client.query('vacuum analyze projects, tasks')
  } finally {
    await client.end()
  }
}
