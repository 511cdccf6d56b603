// JSON Merge Patch (RFC 7396) of object-valued fields: a patch merges into the stored object member by
// member, and what the merge makes is checked against the field's schema before it is stored.
import { Type } from '@sinclair/typebox'
import t, { type Test } from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, post, type Json } from '../helper.js'
import { Shape } from '../support/shapes.js'

const drawings = defineResource({
  collection: 'drawings',
  fields: Type.Object({
    name: Type.String(),
    shape: Type.Optional(Shape),
    frame: Type.Optional(Type.Object({
      width: Type.Integer({ minimum: 1 }),
      height: Type.Optional(Type.Integer({ minimum: 1 })),
      style: Type.Optional(Type.String({ default: 'plain' }))
    }, { additionalProperties: false })),
    tags: Type.Optional(Type.Record(Type.String(), Type.String())),
    pins: Type.Optional(Type.Object({ a: Type.Optional(Type.String()), b: Type.Optional(Type.String()) }, { additionalProperties: false, maxProperties: 1 }))
  })
})

async function drawing (t: Test, fields: Json) {
  const app = await buildTestApp(t, { definitions: [drawings] })
  const created = await post(app, '/v1/drawings', { name: 'sketch', ...fields })
  t.equal(created.statusCode, 201, created.body)
  const url = `/v1/drawings/${body(created).id as number}`
  const patch = async (payload: Json) => await app.inject({ method: 'PATCH', url, payload, headers: { 'content-type': 'application/merge-patch+json' } })
  const read = async () => await app.inject({ method: 'GET', url })
  return { app, url, patch, read }
}

t.test('a patch merges into a stored object member by member; null removes a member', async t => {
  const { patch, read } = await drawing(t, { frame: { width: 10, style: 'gold' } })
  const grown = await patch({ frame: { height: 20 } })
  t.equal(grown.statusCode, 200, grown.body)
  t.same(body(grown).frame, { width: 10, height: 20, style: 'gold' }, 'members the patch leaves out are kept, the nested default is not filled into the patch')
  const shrunk = await patch({ frame: { height: null, width: 12 } })
  t.same(body(shrunk).frame, { width: 12, style: 'gold' })
  t.same(body(await read()).frame, { width: 12, style: 'gold' }, 'as stored')
  const ignored = await patch({ frame: { depth: null } })
  t.equal(ignored.statusCode, 200, 'removing a member that is not there changes nothing (RFC 7396)')
  t.same(body(ignored).frame, { width: 12, style: 'gold' })
})

t.test('what the merge makes is refused when its schema refuses it, and nothing is stored', async t => {
  const { patch, read } = await drawing(t, { frame: { width: 10 }, pins: { a: 'x' } })
  const before = await read()

  const required = assertProblem(t, await patch({ frame: { width: null } }), 400, 'validation')
  t.same(required.errors, [{ in: 'body', pointer: '/frame/width', detail: 'is required, once the patch is merged into the stored value' }])
  const tooMany = assertProblem(t, await patch({ pins: { b: 'y' } }), 400, 'validation')
  t.same(tooMany.errors, [{ in: 'body', pointer: '/pins', detail: 'must NOT have more than 1 properties, once the patch is merged into the stored value' }])
  const bound = assertProblem(t, await patch({ frame: { height: 0 } }), 400, 'validation')
  t.same(bound.errors, [{ in: 'body', pointer: '/frame/height', detail: 'must be >= 1' }], 'a member\'s own bounds are the patch schema\'s to name, without "/frame must be null"')
  const unknown = assertProblem(t, await patch({ frame: { depth: 3 } }), 400, 'validation')
  t.ok(unknown.errors.some((issue: Json) => issue.pointer === '/frame/depth'), 'an undeclared member may only be removed')

  const after = await read()
  t.equal(after.statusCode, 200)
  t.equal(after.headers.etag, before.headers.etag, 'no refused patch changed the record')
  t.same(body(after), body(before))
})

t.test('a union-typed object: another variant\'s members must be removed to switch; a bad merge never reaches storage', async t => {
  const { patch, read } = await drawing(t, { shape: { kind: 'circle', r: 1 } })
  const mixed = assertProblem(t, await patch({ shape: { kind: 'square', side: 2 } }), 400, 'validation')
  t.same(mixed.errors, [{ in: 'body', pointer: '/shape/r', detail: 'is not a known property, once the patch is merged into the stored value; a null for it in the patch removes it' }],
    'names the circle\'s member the square cannot have, and how to remove it')
  t.same(body(await read()).shape, { kind: 'circle', r: 1 }, 'the record still reads (it was a 500 on every read once stored)')

  const switched = await patch({ shape: { kind: 'square', side: 2, r: null } })
  t.equal(switched.statusCode, 200, switched.body)
  t.same(body(switched).shape, { kind: 'square', side: 2 })
  const resized = await patch({ shape: { side: 3 } })
  t.same(body(resized).shape, { kind: 'square', side: 3 }, 'a variant merges like any object')
  t.same(body(await read()).shape, { kind: 'square', side: 3 })
})

t.test('a patch of an object the record does not have yet must make a whole one', async t => {
  const { patch } = await drawing(t, {})
  t.same(assertProblem(t, await patch({ frame: { height: 2 } }), 400, 'validation').errors, [
    { in: 'body', pointer: '/frame/width', detail: 'is required, once the patch is merged into the stored value' }
  ])
  const made = await patch({ frame: { width: 4 } })
  t.same(body(made).frame, { width: 4, style: 'plain' }, 'the merged object gets its defaults')
})

t.test('the OpenAPI patch schema documents what a merge patch may send', async t => {
  const app = await buildTestApp(t, { definitions: [drawings] })
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const frame = document.components.schemas.DrawingPatch.properties.frame
  const form = frame.anyOf[0]
  t.equal(form.required, undefined, 'every member may be left out')
  t.same(form.properties.width.anyOf.map((branch: Json) => branch.type), ['integer', 'null'], 'or be null')
  t.equal(form.properties.style.anyOf[0].default, undefined, 'no default to fill in')
  t.same(form.additionalProperties, { type: 'null' }, 'an undeclared member may only be removed')
  t.equal(document.components.schemas.DrawingPatch.properties.pins.anyOf[0].maxProperties, undefined, 'bounds of the whole object apply to the merged value')
  t.same(document.components.schemas.DrawingCreate.properties.frame.required, ['width'], 'the create schema is unchanged')
})

t.test('a record (members named by pattern) is patched member by member too', async t => {
  const { patch } = await drawing(t, { tags: { a: 'x', b: 'y' } })
  const patched = await patch({ tags: { a: null, c: 'z' } })
  t.equal(patched.statusCode, 200, patched.body)
  t.same(body(patched).tags, { b: 'y', c: 'z' })
  t.same(assertProblem(t, await patch({ tags: { b: 1 } }), 400, 'validation').errors, [{ in: 'body', pointer: '/tags/b', detail: 'must be string or null, not integer' }])
})

t.test('a PATCH with no body at all is refused as a PUT or POST without one is, and changes nothing', async t => {
  const app = await buildTestApp(t)
  const project = body(await post(app, '/v1/projects', { name: 'unpatched' }))
  const url = `/v1/projects/${project.id as number}`
  // Before, with no Content-Type no schema was chosen for the body, and the handler met undefined: a 500.
  for (const [method, target] of [['PATCH', url], ['PUT', url], ['POST', '/v1/projects']] as const) {
    const problem = assertProblem(t, await app.inject({ method, url: target }), 400, 'validation')
    t.same(problem.errors, [{ in: 'body', pointer: '', detail: 'must be object, not null' }], `${method} without a body`)
  }
  t.same(body(await app.inject({ method: 'GET', url })), project, 'nothing changed')
  assertProblem(t, await app.inject({ method: 'PATCH', url: '/v1/tasks/999999' }), 400, 'validation')
})
