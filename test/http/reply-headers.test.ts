/**
 * headerPreset (src/http/reply-headers.ts) starts a reply's headers with a
 * fixed set in one object literal. The answer must be what setting them one
 * by one gives; and the place it reaches into Fastify must still be there,
 * or every answer silently takes the slower path.
 */
import Fastify, { type FastifyReply } from 'fastify'
import t from 'tap'
import { headerPreset } from '../../src/http/reply-headers.js'

const NAMES = ['x-one', 'x-two', 'content-security-policy']

t.test('the preset headers are sent with those set before and after them, as reply.header would send them', async t => {
  const preset = headerPreset(NAMES)
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  app.addHook('onRequest', async (_request, reply) => { reply.header('X-Before', 'kept') })
  app.addHook('onRequest', async (request, reply) => { preset(reply, request.url === '/other' ? ['1', '2', "default-src 'self'"] : ['a', 'b', "default-src 'none'"]) })
  const answer = (_request: unknown, reply: FastifyReply): object => {
    t.ok(Object.getOwnPropertySymbols(reply).some(symbol => symbol.description === 'fastify.reply.headers'), 'Fastify keeps a reply\'s headers where the preset looks for them')
    reply.header('x-two', 'replaced').header('x-after', 'added')
    return { ok: true }
  }
  app.get('/', answer)
  app.get('/other', answer)

  const first = await app.inject({ method: 'GET', url: '/' })
  t.equal(first.statusCode, 200)
  t.match(first.headers, { 'x-before': 'kept', 'x-one': 'a', 'x-two': 'replaced', 'content-security-policy': "default-src 'none'", 'x-after': 'added', 'content-type': 'application/json; charset=utf-8' })
  t.same(JSON.parse(first.body), { ok: true })
  const other = await app.inject({ method: 'GET', url: '/other' })
  t.match(other.headers, { 'x-before': 'kept', 'x-one': '1', 'content-security-policy': "default-src 'self'" }, 'values chosen per request')
  t.equal((await app.inject({ method: 'GET', url: '/' })).headers['x-one'], 'a', 'one reply\'s headers never reach another')
})

t.test('a reply without Fastify\'s header object gets the headers one by one', async t => {
  const preset = headerPreset(NAMES)
  const set: Array<[string, unknown]> = []
  const reply = { header (name: string, value: unknown) { set.push([name, value]); return reply } }
  preset(reply as unknown as FastifyReply, ['a', 'b', 'c'])
  t.same(set, [['x-one', 'a'], ['x-two', 'b'], ['content-security-policy', 'c']])
})
