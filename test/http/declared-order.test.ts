/**
 * Every answer lists a record's members in the order its schema declares them,
 * the order the OpenAPI document shows: the same for a read, a list item, a
 * create and an update, whichever fields are set.
 */
import t from 'tap'
import { withoutRequired } from '../../src/http/declared-order.js'
import { body, buildTestApp, post, type Json } from '../helper.js'

/** The order of the members of an object as its JSON text has them (JSON.parse keeps it for names that are not integers). */
const order = (value: Json): string[] => Object.keys(value)

t.test('a record\'s members come in the declared order in every answer', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const declared = Object.keys(document.components.schemas.Project.properties as Json)
  // The optional fields set, so that required-first writing would have moved them behind the timestamps.
  const created = await post(app, '/v1/projects', { tags: ['x'], budget: 5, name: 'ordered', description: 'in order' })
  t.equal(created.statusCode, 201)
  const expected = declared.filter(name => name in body(created))
  t.same(expected, ['id', 'name', 'description', 'active', 'budget', 'tags', 'links', 'createdAt', 'updatedAt'], 'the document declares fields, then links and timestamps')
  t.same(order(body(created)), expected, 'POST')
  const id = body(created).id as number
  t.same(order(body(await app.inject({ method: 'GET', url: `/v1/projects/${id}` }))), expected, 'GET one')
  const listed = body(await app.inject({ method: 'GET', url: '/v1/projects?name=ordered' })) as unknown as Json[]
  t.same(order(listed[0]!), expected, 'a list item')
  const patched = await app.inject({ method: 'PATCH', url: `/v1/projects/${id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { budget: 6 } })
  t.same(order(body(patched)), expected, 'PATCH')
  const sparse = body(await app.inject({ method: 'GET', url: '/v1/projects?name=ordered&fields=budget,name' })) as unknown as Json[]
  t.same(order(sparse[0]!), ['id', 'name', 'budget', 'links'], 'a sparse item: the fields asked for, in the declared order, with id and links')

  const problem = body(await app.inject({ method: 'GET', url: '/v1/projects?limit=0' }))
  t.same(order(problem), ['type', 'title', 'status', 'detail', 'instance', 'requestId', 'errors'], 'a problem, as RFC 9457 lists its members')
})

t.test('required is left out only where it decides nothing but the order', async t => {
  const schema = {
    type: 'object',
    required: ['required'],
    properties: {
      // A property may be called `required`: it is kept.
      required: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } },
      choice: { anyOf: [{ type: 'object', required: ['a'], properties: { a: { type: 'string' } } }, { type: 'object', required: ['b'], properties: { b: { type: 'string' } } }] },
      list: { type: 'array', items: { type: 'object', required: ['c'], properties: { c: { type: 'string' } } } }
    }
  }
  t.same(withoutRequired(schema), {
    type: 'object',
    properties: {
      required: { type: 'object', properties: { a: { type: 'string' } } },
      // fast-json-stringify picks an anyOf branch by validating against it: `required` tells these two apart.
      choice: schema.properties.choice,
      list: { type: 'array', items: { type: 'object', properties: { c: { type: 'string' } } } }
    }
  })
  t.same(schema.required, ['required'], 'the schema given is not changed')
})
