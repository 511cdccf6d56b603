// An object inside a field is closed, as the body itself is: a member the definition does not declare
// is a 400 naming it, at any depth (object, array item, record value, tuple position, composite),
// never stored and then silently left out of every representation. An object that says
// `additionalProperties: true` keeps what it is sent, and shows it.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, pointers, post, type Json } from '../helper.js'

const parcels = defineResource({
  collection: 'parcels',
  fields: Type.Object({
    name: Type.String(),
    size: Type.Optional(Type.Object({ width: Type.Integer(), height: Type.Optional(Type.Integer()) })),
    items: Type.Optional(Type.Array(Type.Object({ sku: Type.String() }))),
    stock: Type.Optional(Type.Record(Type.String(), Type.Object({ count: Type.Integer() }))),
    route: Type.Optional(Type.Tuple([Type.Object({ city: Type.String() }), Type.Integer()])),
    sender: Type.Optional(Type.Composite([Type.Object({ city: Type.String() }), Type.Object({ zip: Type.String() })])),
    extras: Type.Optional(Type.Object({ note: Type.String() }, { additionalProperties: true }))
  })
})

t.test('a member the definition does not declare is refused at every depth', async t => {
  const app = await buildTestApp(t, { definitions: [parcels] })
  const refused = assertProblem(t, await app.inject({
    method: 'POST',
    url: '/v1/parcels',
    payload: {
      name: 'box',
      size: { width: 2, depth: 3 },
      items: [{ sku: 'a' }, { sku: 'b', colour: 'red' }],
      stock: { north: { count: 1, reserved: 0 } },
      route: [{ city: 'Oslo', country: 'NO' }, 3],
      sender: { city: 'Bergen', zip: '5003', street: 'x' }
    }
  }), 400, 'validation')
  t.same(pointers(refused).sort(), ['/items/1/colour', '/route/0/country', '/sender/street', '/size/depth', '/stock/north/reserved'])
  t.ok(refused.errors.every((issue: Json) => issue.detail === 'is not a known property'))
  t.same(body(await app.inject({ method: 'GET', url: '/v1/parcels' })), [], 'nothing was stored')

  const created = body(await post(app, '/v1/parcels', { name: 'box', size: { width: 2 } }))
  const patched = assertProblem(t, await app.inject({ method: 'PATCH', url: `/v1/parcels/${created.id as number}`, payload: { size: { depth: 3 } }, headers: { 'content-type': 'application/merge-patch+json' } }), 400, 'validation')
  t.same(pointers(patched), ['/size/depth'], 'a merge patch may only remove (null) what is not declared')
  t.same(body(await app.inject({ method: 'GET', url: `/v1/parcels/${created.id as number}` })).size, { width: 2 })
})

t.test('an object declared open keeps and shows every member', async t => {
  const app = await buildTestApp(t, { definitions: [parcels] })
  const created = body(await post(app, '/v1/parcels', { name: 'box', extras: { note: 'fragile', floor: 3, tags: ['x'] } }))
  t.same(created.extras, { note: 'fragile', floor: 3, tags: ['x'] })
  t.same(body(await app.inject({ method: 'GET', url: `/v1/parcels/${created.id as number}` })).extras, { note: 'fragile', floor: 3, tags: ['x'] })
})

t.test('the document says which objects are closed', async t => {
  const app = await buildTestApp(t, { definitions: [parcels] })
  const { properties } = body(await app.inject({ method: 'GET', url: '/openapi.json' })).components.schemas.Parcel
  t.equal(properties.size.additionalProperties, false)
  t.equal(properties.items.items.additionalProperties, false)
  t.equal(properties.sender.additionalProperties, false)
  t.equal(properties.extras.additionalProperties, true)
})
