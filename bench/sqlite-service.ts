/**
 * The service on a seeded SQLite file, as `npm run bench`, `bench:profile`
 * and `bench:ab` serve it: with an API key of its own, written into the file
 * before the server opens it, and the file's cursor-signing key, so that
 * cursor workloads can name a deep position.
 */
import BetterSqlite3 from 'better-sqlite3'
import { hashApiKey, newApiKey } from '../src/auth/secrets.js'
import { cursorCodec, type CursorCodec } from '../src/resources/cursor.js'
import type { Server, Workload } from './measure.js'
import { startService, type Target } from './service.js'

export interface SqliteService { server: Server, apiKey: string, cursors: CursorCodec }

/** The service as the workloads address it (allWorkloads). */
export const target = ({ server, cursors, apiKey }: SqliteService): Target => ({ base: server.base, cursors, apiKey })

export interface ServeOptions {
  /** Node flags after `npm start`'s own (a profiler's, say). */
  readonly nodeFlags?: readonly string[]
  /** The dist/ folder to run, when not this one (startService). */
  readonly build?: string
  /** Environment variables besides the service's own settings (a preloaded profiler's). */
  readonly env?: Record<string, string>
}

export async function serveSqlite (file: string, port: number, dataDir: string, { nodeFlags = [], build, env = {} }: ServeOptions = {}): Promise<SqliteService> {
  const db = new BetterSqlite3(file)
  const key = newApiKey()
  db.prepare('insert into resourcery_api_keys (name, prefix, hash, scopes, createdAt) values (?, ?, ?, ?, ?)').run('bench', key.prefix, hashApiKey(key.key), '["admin"]', new Date().toISOString())
  const server = await startService(port, { ...env, DATABASE_URL: `sqlite:${file}`, DATA_DIR: dataDir }, nodeFlags, build)
  const secretRow = db.prepare("select value from resourcery_secrets where name = 'cursor-signing'").get() as { value: string }
  db.close()
  return { server, apiKey: key.key, cursors: cursorCodec(Buffer.from(secretRow.value, 'base64')) }
}

/**
 * The one workload whose name contains `wanted` (case-insensitive: `JWT`,
 * `304`, `filtered`, `PATCH`…). None or several is an error that lists the
 * names to choose from.
 */
export function chosenWorkload (workloads: readonly Workload[], wanted: string): Workload {
  const matching = workloads.filter(workload => workload.name.toLowerCase().includes(wanted.toLowerCase()))
  if (matching.length === 1) return matching[0]!
  throw new Error(`"${wanted}" names ${matching.length === 0 ? 'no workload' : 'several'}; one of:\n  ${(matching.length === 0 ? workloads : matching).map(item => item.name).join('\n  ')}`)
}
