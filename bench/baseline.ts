/**
 * The reference servers the benchmark measures beside the service: a bare
 * Fastify 5 hello-world with a TypeBox response schema; a bare better-sqlite3
 * insert route with synchronous=FULL (one fsync per request); and the
 * contract's floor: a static task from a route that sends every header the
 * contract puts on a record (security, rate limit, caching, request id) and
 * logs one line per request as the service does, with no database, auth or
 * logic. What the floor costs over the hello is what the contract's HTTP
 * alone costs; what the service costs over the floor is the engine's. The
 * same floor without its log line (`floor-unlogged`) splits that cost into
 * the headers' part and the log line's.
 * Started as `node dist/bench/baseline.js hello|insert|floor|floor-unlogged PORT [DB_FILE]`.
 */
import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import BetterSqlite3 from 'better-sqlite3'
import Fastify, { type FastifyServerOptions } from 'fastify'
import { loggerOptions } from '../src/http/log-output.js'
import { OneLineLogController } from '../src/http/request-log.js'
import { headerPreset } from '../src/http/reply-headers.js'
import { apiSecurityHeaders } from '../src/plugins/security.js'

const [mode, port, file] = process.argv.slice(2)
const floor = mode === 'floor' || mode === 'floor-unlogged'
// Fastify makes a request's id whether or not it logs: the unlogged floor's x-request-id costs what the floor's does.
const app = mode === 'floor'
  ? Fastify({ logger: loggerOptions('info'), logController: new OneLineLogController(), genReqId: () => randomUUID() } as FastifyServerOptions)
  : Fastify({ logger: false, ...(floor ? { genReqId: () => randomUUID() } : {}) })

if (mode === 'insert') {
  const db = new BetterSqlite3(file ?? ':memory:')
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec('create table if not exists items (id integer primary key autoincrement, name text not null)')
  const insert = db.prepare('insert into items (name) values (?) returning id, name')
  app.post('/items', {
    schema: { response: { 201: Type.Object({ id: Type.Integer(), name: Type.String() }) } }
  }, async (request, reply) => await reply.code(201).send(insert.get((request.body as { name: string }).name)))
} else if (floor) {
  // The service's own security headers, set as the service sets them: in one step that keeps the reply's header object fast.
  const security = apiSecurityHeaders({ https: false })
  const presetSecurity = headerPreset(security.map(([name]) => name))
  const securityValues = security.map(([, value]) => value)
  const task = { id: 12345, name: 'task 12345', projectId: 2346, status: 'todo', priority: 1, links: { self: '/v1/tasks/12345', project: '/v1/projects/2346' }, createdAt: '2026-11-22T01:20:38.392Z', updatedAt: '2026-11-22T01:20:38.392Z', dueDate: '2026-10-15' }
  const Link = Type.String()
  const Task = Type.Object({
    id: Type.Integer(), name: Type.String(), projectId: Type.Integer(), status: Type.String(), priority: Type.Integer(), links: Type.Object({ self: Link, project: Link }), createdAt: Type.String(), updatedAt: Type.String(), dueDate: Type.String()
  })
  app.get('/v1/tasks/12345', { schema: { response: { 200: Task } } }, async (request, reply) => {
    reply.header('x-request-id', request.id)
    presetSecurity(reply, securityValues)
    return await reply.headers({
      'x-ratelimit-limit': 100000000,
      'x-ratelimit-remaining': 99999999,
      'x-ratelimit-reset': 60,
      'ratelimit-policy': '"default";q=100000000;w=60',
      ratelimit: '"default";r=99999999;t=60',
      etag: '"5_6jFox-.12345.1"',
      'last-modified': 'Sun, 22 Nov 2026 01:20:38 GMT',
      vary: 'Authorization, Api-Version',
      'cache-control': 'private, no-cache'
    }).send(task)
  })
} else {
  app.get('/hello', { schema: { response: { 200: Type.Object({ hello: Type.String() }) } } }, async () => ({ hello: 'world' }))
}

await app.listen({ host: '127.0.0.1', port: Number(port) })
process.stdout.write('ready\n')
