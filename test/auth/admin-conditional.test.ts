/**
 * The admin collections answer conditional requests as every resource does:
 * an ETag on each item and list, 304 for a held one, 412 for an If-Match that
 * names another state (and then nothing is revoked).
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertProblem, body, buildTestApp, post, type Json } from '../helper.js'

const ALLOW_PRIVATE = { WEBHOOK_ALLOW_PRIVATE: '1' }

/** A fresh item of each admin collection: its path, and the noun its problems use. */
async function createEach (app: FastifyInstance): Promise<Array<{ collection: string, path: string, noun: string, createdTag: unknown }>> {
  const created = [
    { collection: '/v1/api-keys', noun: 'API key', response: await post(app, '/v1/api-keys', { name: 'conditional', scopes: ['projects:read'] }) },
    { collection: '/v1/clients', noun: 'OAuth client', response: await post(app, '/v1/clients', { name: 'conditional', scopes: ['projects:read'] }) },
    { collection: '/v1/webhooks', noun: 'webhook subscription', response: await post(app, '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['projects.created'] }) }
  ]
  return created.map(({ collection, noun, response }) => ({ collection, noun, path: response.headers.location as string, createdTag: response.headers.etag }))
}

t.test('an admin item carries a strong ETag: If-None-Match revalidates, If-Match guards the read', async t => {
  const app = await buildTestApp(t, { env: ALLOW_PRIVATE })
  for (const { path, noun, createdTag } of await createEach(app)) {
    const read = await app.inject({ method: 'GET', url: path })
    t.equal(read.statusCode, 200, path)
    const etag = read.headers.etag as string
    t.match(etag, /^"[\w-]+"$/, `${path}: a strong tag`)
    t.equal(createdTag, etag, `${path}: the create's 201 carries the tag of the item as read (without its secret)`)
    t.equal(read.headers['cache-control'], 'no-store', 'credentials are still never stored')
    t.equal((await app.inject({ method: 'GET', url: path })).headers.etag, etag, `${path}: the same state, the same tag`)

    for (const method of ['GET', 'HEAD'] as const) {
      const held = await app.inject({ method, url: path, headers: { 'if-none-match': `"other", ${etag}` } })
      t.equal(held.statusCode, 304, `${method} ${path} with its tag`)
      t.equal(held.body, '')
      t.equal(held.headers.etag, etag)
      t.equal((await app.inject({ method, url: path, headers: { 'if-none-match': '"other"' } })).statusCode, 200, `${method} ${path} with another tag`)
    }
    t.equal((await app.inject({ method: 'GET', url: path, headers: { 'if-match': etag } })).statusCode, 200, `${path}: If-Match with its tag holds`)
    t.equal((await app.inject({ method: 'GET', url: path, headers: { 'if-match': '*' } })).statusCode, 200)
    const stale = assertProblem(t, await app.inject({ method: 'GET', url: path, headers: { 'if-match': '"other"' } }), 412)
    t.equal(stale.detail, `the ${noun} has changed since that ETag (or is not that one); GET it again`)
    assertProblem(t, await app.inject({ method: 'GET', url: path, headers: { 'if-match': `W/${etag}` } }), 412)
  }
})

t.test('a revocation with If-Match removes only the state the client saw', async t => {
  const app = await buildTestApp(t, { env: ALLOW_PRIVATE })
  for (const { collection, path, noun } of await createEach(app)) {
    const etag = (await app.inject({ method: 'GET', url: path })).headers.etag as string
    const stale = assertProblem(t, await app.inject({ method: 'DELETE', url: path, headers: { 'if-match': '"other"' } }), 412)
    t.equal(stale.detail, `the ${noun} has changed since that ETag (or is not that one); GET it again`)
    const existing = assertProblem(t, await app.inject({ method: 'DELETE', url: path, headers: { 'if-none-match': '*' } }), 412)
    t.match(existing.detail, /nothing was removed/)
    t.equal((await app.inject({ method: 'GET', url: path })).statusCode, 200, `${path}: a refused revocation changed nothing`)
    const id = body(await app.inject({ method: 'GET', url: path })).id as number
    t.ok((body(await app.inject({ method: 'GET', url: collection })) as unknown as Json[]).some(item => item.id === id), `${collection} still lists it`)

    t.equal((await app.inject({ method: 'DELETE', url: path, headers: { 'if-match': etag } })).statusCode, 204, `${path}: revoked with its current tag`)
    assertProblem(t, await app.inject({ method: 'DELETE', url: path, headers: { 'if-match': etag } }), 404)
    assertProblem(t, await app.inject({ method: 'GET', url: path }), 404)
  }
})

t.test('admin lists carry a weak ETag: If-None-Match revalidates, only If-Match: * holds', async t => {
  const app = await buildTestApp(t, { env: ALLOW_PRIVATE })
  const items = await createEach(app)
  const hook = items[2]!.path
  for (const collection of [...items.map(item => item.collection), `${hook}/deliveries`]) {
    const read = await app.inject({ method: 'GET', url: collection })
    t.equal(read.statusCode, 200, collection)
    const etag = read.headers.etag as string
    t.match(etag, /^W\/"[\w-]+"$/, `${collection}: a weak tag`)
    const held = await app.inject({ method: 'GET', url: collection, headers: { 'if-none-match': etag } })
    t.equal(held.statusCode, 304, `${collection} with its tag`)
    t.equal(held.body, '')
    t.equal((await app.inject({ method: 'GET', url: collection, headers: { 'if-match': '*' } })).statusCode, 200)
    const refused = assertProblem(t, await app.inject({ method: 'GET', url: collection, headers: { 'if-match': etag } }), 412)
    t.match(refused.detail, /only If-Match: \* can hold/)
  }

  // A list's tag follows its content.
  const before = (await app.inject({ method: 'GET', url: '/v1/clients' })).headers.etag
  await post(app, '/v1/clients', { name: 'another', scopes: ['projects:read'] })
  const after = await app.inject({ method: 'GET', url: '/v1/clients', headers: { 'if-none-match': before as string } })
  t.equal(after.statusCode, 200, 'a changed list is sent again')
  t.not(after.headers.etag, before)

  // The deliveries of a subscription that does not exist are 404, whatever the condition.
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/webhooks/999/deliveries', headers: { 'if-match': '"x"' } }), 404)
})
