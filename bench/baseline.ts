/**
 * The reference servers the benchmark measures beside the service: a bare
 * Fastify 5 hello-world with a TypeBox response schema, and a bare
 * better-sqlite3 insert route with synchronous=FULL (one fsync per request).
 * Started as `node dist/bench/baseline.js hello|insert PORT [DB_FILE]`.
 */
import { Type } from '@sinclair/typebox'
import BetterSqlite3 from 'better-sqlite3'
import Fastify from 'fastify'

const [mode, port, file] = process.argv.slice(2)
const app = Fastify({ logger: false })

if (mode === 'insert') {
  const db = new BetterSqlite3(file ?? ':memory:')
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec('create table if not exists items (id integer primary key autoincrement, name text not null)')
  const insert = db.prepare('insert into items (name) values (?) returning id, name')
  app.post('/items', {
    schema: { response: { 201: Type.Object({ id: Type.Integer(), name: Type.String() }) } }
  }, async (request, reply) => await reply.code(201).send(insert.get((request.body as { name: string }).name)))
} else {
  app.get('/hello', { schema: { response: { 200: Type.Object({ hello: Type.String() }) } } }, async () => ({ hello: 'world' }))
}

await app.listen({ host: '127.0.0.1', port: Number(port) })
process.stdout.write('ready\n')
