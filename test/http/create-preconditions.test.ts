/**
 * RFC 9110 §13.1.1-2: a server MUST evaluate If-Match and If-None-Match
 * before performing any method, POST included. A create's target is the
 * collection it adds to, whose current representation is its list (weakly
 * tagged): so only If-Match: * holds, If-None-Match: * never does (the
 * collection exists), and If-None-Match fails while it names the list's
 * current tag, as the caller sees the list. A failed one is 412 and creates nothing.
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { ADMIN, assertProblem, bearer, body, buildTestApp, createProject, post } from '../helper.js'

const PAST = 'Mon, 01 Jan 2001 00:00:00 GMT'

/** The list a create at `collection` adds to: its tag, and how many items it holds. */
async function listOf (app: FastifyInstance, collection: string, authorization = ADMIN): Promise<{ tag: string, count: number }> {
  const list = await app.inject({ method: 'GET', url: collection, headers: { authorization } })
  return { tag: list.headers.etag as string, count: (body(list) as unknown as unknown[]).length }
}

/**
 * The refusals and the creates that pass, on one collection: `item()` is a
 * body that would be created (a fresh one each time, for unique fields).
 */
async function checkCollection (t: Test, app: FastifyInstance, collection: string, item: () => object): Promise<void> {
  const create = async (headers: Record<string, string>, payload: object = item()) => await post(app, collection, payload, headers)
  const before = await listOf(app, collection)
  t.match(before.tag, /^W\//, `${collection}: a list's tag is weak`)

  for (const ifMatch of [before.tag, before.tag.slice(2), '"other"']) {
    const refused = assertProblem(t, await create({ 'if-match': ifMatch }), 412, 'precondition-failed')
    t.match(refused.detail, /only If-Match: \* can hold/, `${collection}: If-Match ${ifMatch}`)
    t.equal(refused.instance, collection)
  }
  const exists = assertProblem(t, await create({ 'if-none-match': '*' }), 412, 'precondition-failed')
  t.equal(exists.detail, `If-None-Match: * holds only where nothing exists yet, and ${collection} does; nothing was created`)
  for (const ifNoneMatch of [before.tag, `"stale", ${before.tag}`, before.tag.slice(2)]) {
    const current = assertProblem(t, await create({ 'if-none-match': ifNoneMatch }), 412, 'precondition-failed')
    t.equal(current.detail, `If-None-Match names the current ETag of ${collection}; nothing was created`, `${collection}: If-None-Match ${ifNoneMatch} (weak comparison)`)
  }
  t.same(await listOf(app, collection), before, `${collection}: none of the refused creates created anything`)

  t.equal((await create({ 'if-match': '*' })).statusCode, 201, `${collection}: If-Match: * holds, the collection exists`)
  t.equal((await create({ 'if-none-match': before.tag })).statusCode, 201, `${collection}: a tag the collection no longer has passes`)
  t.equal((await create({ 'if-none-match': '"other", ,' })).statusCode, 201, `${collection}: a tag that was never current passes`)
  t.equal((await create({ 'if-unmodified-since': PAST })).statusCode, 201, `${collection}: a collection has no Last-Modified, so If-Unmodified-Since is ignored`)
  t.equal((await listOf(app, collection)).count, before.count + 4, `${collection}: each of those created one`)
}

t.test('a create evaluates If-Match and If-None-Match on its collection, a related one included', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  let made = 0
  await checkCollection(t, app, '/v1/projects', () => ({ name: `conditional ${++made}` }))
  await checkCollection(t, app, `/v1/projects/${project.id as number}/tasks`, () => ({ name: `task ${++made}` }))
  // Another project's tasks are another collection: its tag does not name this one.
  const other = await createProject(app)
  const othersTag = (await listOf(app, `/v1/projects/${other.id as number}/tasks`)).tag
  t.equal((await post(app, `/v1/projects/${project.id as number}/tasks`, { name: 'elsewhere' }, { 'if-none-match': othersTag })).statusCode, 201)
})

t.test('the preconditions come after what would refuse the create anyway, as on PUT and PATCH', async t => {
  const app = await buildTestApp(t)
  const unknown = await post(app, '/v1/projects/999999/tasks', { name: 'orphan' }, { 'if-none-match': '*' })
  assertProblem(t, unknown, 404, 'not-found')
  const invalid = assertProblem(t, await post(app, '/v1/projects', { name: 7 }, { 'if-none-match': '*' }), 400, 'validation')
  t.same(invalid.errors.map((issue: { pointer: string }) => issue.pointer), ['/name'])
  const unauthenticated = await post(app, '/v1/projects', { name: 'x' }, { 'if-none-match': '*', authorization: 'Bearer not-a-credential' })
  assertProblem(t, unauthenticated, 401)
})

t.test('If-None-Match on a create compares with the list the caller sees: an owner\'s own', async t => {
  const app = await buildTestApp(t)
  const alice = bearer({ sub: 'alice', scope: 'notes:read notes:write' })
  const bob = bearer({ sub: 'bob', scope: 'notes:read notes:write' })
  t.equal((await post(app, '/v1/notes', { name: 'alice 1' }, { authorization: alice })).statusCode, 201)
  t.equal((await post(app, '/v1/notes', { name: 'bob 1' }, { authorization: bob })).statusCode, 201)
  const alicesTag = (await listOf(app, '/v1/notes', alice)).tag
  assertProblem(t, await post(app, '/v1/notes', { name: 'alice 2' }, { authorization: alice, 'if-none-match': alicesTag }), 412, 'precondition-failed')
  t.equal((await post(app, '/v1/notes', { name: 'bob 2' }, { authorization: bob, 'if-none-match': alicesTag })).statusCode, 201, 'alice\'s list is not bob\'s')
})

t.test('the admin collections evaluate them too', async t => {
  const app = await buildTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1' } })
  let made = 0
  await checkCollection(t, app, '/v1/api-keys', () => ({ name: `key ${++made}`, scopes: ['projects:read'] }))
  await checkCollection(t, app, '/v1/clients', () => ({ name: `client ${++made}`, scopes: ['projects:read'] }))
  await checkCollection(t, app, '/v1/webhooks', () => ({ url: `http://127.0.0.1:9/hook/${++made}`, events: ['projects.created'] }))
})

t.test('the document shows a create\'s conditions and its 412', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  for (const path of ['/v1/projects', '/v1/projects/{id}/tasks', '/v1/api-keys', '/v1/clients', '/v1/webhooks']) {
    const operation = document.paths[path].post
    const headers = operation.parameters.filter((parameter: { in: string }) => parameter.in === 'header').map((parameter: { name: string }) => parameter.name)
    t.ok(headers.includes('If-Match') && headers.includes('If-None-Match'), `POST ${path}: its conditions`)
    t.match(operation.responses['412'].description, /nothing was created/, `POST ${path}: its 412`)
  }
})
