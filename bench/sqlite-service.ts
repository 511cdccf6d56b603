/**
 * The service on a seeded SQLite file, as `npm run bench` and
 * `npm run bench:profile` serve it: with an API key of its own, written into
 * the file before the server opens it, and the file's cursor-signing key, so
 * that cursor workloads can name a deep position.
 */
import BetterSqlite3 from 'better-sqlite3'
import { hashApiKey, newApiKey } from '../src/auth/secrets.js'
import { cursorCodec, type CursorCodec } from '../src/resources/cursor.js'
import type { Server } from './measure.js'
import { startService } from './service.js'

export interface SqliteService { server: Server, apiKey: string, cursors: CursorCodec }

/** `nodeFlags` come after `npm start`'s own (a profiler's, say). */
export async function serveSqlite (file: string, port: number, dataDir: string, nodeFlags: readonly string[] = []): Promise<SqliteService> {
  const db = new BetterSqlite3(file)
  const key = newApiKey()
  db.prepare('insert into resourcery_api_keys (name, prefix, hash, scopes, createdAt) values (?, ?, ?, ?, ?)').run('bench', key.prefix, hashApiKey(key.key), '["admin"]', new Date().toISOString())
  const server = await startService(port, { DATABASE_URL: `sqlite:${file}`, DATA_DIR: dataDir }, nodeFlags)
  const secretRow = db.prepare("select value from resourcery_secrets where name = 'cursor-signing'").get() as { value: string }
  db.close()
  return { server, apiKey: key.key, cursors: cursorCodec(Buffer.from(secretRow.value, 'base64')) }
}
