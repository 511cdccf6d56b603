/**
 * The naive stack the performance budget was set against (issue #9: "a naive
 * Fastify + better-sqlite3 + helmet + jwt + rate-limit stack reaches about
 * 0.28 for GET one and 0.14 for a list of 20"): the ecosystem's plugins with
 * their defaults, a prepared statement per route, a count per list, and none
 * of the contract's extras (links, ETags, problem details, request logging).
 * Measured beside the service on the same seeded file, it shows what the
 * budget's premise is on the machine at hand, and how far the engine is past it.
 * Started as `node dist/bench/naive.js PORT DB_FILE JWT_SECRET`.
 */
import helmet from '@fastify/helmet'
import jwt from '@fastify/jwt'
import rateLimit from '@fastify/rate-limit'
import { Type, type Static } from '@sinclair/typebox'
import BetterSqlite3 from 'better-sqlite3'
import Fastify from 'fastify'

const [port, file, secret] = process.argv.slice(2)
const db = new BetterSqlite3(file!, { readonly: true })
const app = Fastify({ logger: false })
await app.register(helmet)
await app.register(jwt, { secret: secret! })
await app.register(rateLimit, { max: 100_000_000, timeWindow: 60_000 })
app.addHook('onRequest', async request => { await request.jwtVerify() })

const Task = Type.Object({
  id: Type.Integer(),
  version: Type.Integer(),
  name: Type.String(),
  projectId: Type.Integer(),
  status: Type.String(),
  priority: Type.Integer(),
  dueDate: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String()
})
const Id = Type.Object({ id: Type.Integer({ minimum: 1 }) })
const Page = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }), page: Type.Integer({ minimum: 1, default: 1 }) })
const one = db.prepare('select * from tasks where id = ?')
const page = db.prepare('select * from tasks order by id limit ? offset ?')
const count = db.prepare('select count(*) from tasks').pluck()

app.get<{ Params: Static<typeof Id> }>('/v1/tasks/:id', { schema: { params: Id, response: { 200: Task } } }, async (request, reply) => {
  const task = one.get(request.params.id)
  return task ?? await reply.code(404).send()
})
app.get<{ Querystring: Static<typeof Page> }>('/v1/tasks', { schema: { querystring: Page, response: { 200: Type.Array(Task) } } }, async (request, reply) => {
  const { limit, page: number } = request.query
  reply.header('x-total-count', count.get())
  return page.all(limit, (number - 1) * limit)
})

await app.listen({ host: '127.0.0.1', port: Number(port) })
process.stdout.write('ready\n')
