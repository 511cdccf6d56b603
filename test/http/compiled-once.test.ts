/**
 * Validators and serializers are compiled once per schema, shared schemas and
 * options, and reused by every app of the process (src/http/compiled-once.ts).
 * Apps built one after another in one process, whose definitions give the
 * same schema names other shapes, must each validate and answer by their own:
 * the reuse must never cross definitions.
 */
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { compiledOnce } from '../../src/http/compiled-once.js'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, pointers, post } from '../helper.js'

const colored = defineResource({ collection: 'gadgets', fields: Type.Object({ name: Type.String(), color: Type.Optional(Type.String()) }) })
const weighed = defineResource({ collection: 'gadgets', fields: Type.Object({ name: Type.String(), weight: Type.Optional(Type.Integer({ minimum: 1 })) }) })

for (const [label, definition, own, other] of [
  ['colored', colored, { color: 'red' }, { weight: 3 }],
  ['weighed', weighed, { weight: 3 }, { color: 'red' }],
  ['colored again', colored, { color: 'blue' }, { weight: 4 }]
] as const) {
  t.test(`${label}: validates and answers by its own definition`, async t => {
    const app = await buildTestApp(t, { definitions: [definition] })
    const created = await post(app, '/v1/gadgets', { name: 'g', ...own })
    t.equal(created.statusCode, 201)
    t.same(body(created), { id: 1, name: 'g', ...own, links: { self: '/v1/gadgets/1' }, createdAt: body(created).createdAt, updatedAt: body(created).updatedAt }, 'the response has its own fields, and only those')
    const read = await app.inject({ method: 'GET', url: '/v1/gadgets/1' })
    t.same(Object.keys(body(read)).sort(), Object.keys(body(created)).sort(), 'GET writes the same fields')
    const refused = assertProblem(t, await post(app, '/v1/gadgets', { name: 'g', ...other }), 400)
    t.same(pointers(refused), [`/${Object.keys(other)[0]!}`], 'the other definition\'s field is unknown here')
    const list = await app.inject({ method: 'GET', url: '/v1/gadgets?limit=1' })
    t.same(body(list), [body(read)], 'the list writes the same fields')
  })
}

t.test('the key holds every input: options that differ only in a function are another context', async t => {
  const shared = compiledOnce<string>()
  const options = (plugin: () => void): unknown => ({ customOptions: { allErrors: true }, plugins: [plugin] })
  t.equal(shared({ Thing: { type: 'object' } }, options(function first () {}))('body {}', () => 'first'), 'first')
  t.equal(shared({ Thing: { type: 'object' } }, options(function second () {}))('body {}', () => 'second'), 'second', 'another plugin, compiled anew')
  t.equal(shared({ Thing: { type: 'string' } }, options(function first () {}))('body {}', () => 'third'), 'third', 'other shared schemas, compiled anew')
  t.equal(shared({ Thing: { type: 'object' } }, options(function first () {}))('body {}', () => 'fourth'), 'first', 'equal inputs reuse what was compiled')
  t.equal(shared({ Thing: { type: 'object' } }, options(function first () {}))('querystring {}', () => 'fifth'), 'fifth', 'another key, compiled anew')
})
