import BetterSqlite3 from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { resources } from '../../schemas/index.js'
import { requestFingerprint } from '../../src/plugins/idempotency.js'
import { buildModel } from '../../src/resources/model.js'
import { ADMIN, assertProblem, bearer, body, buildTestApp, listen, post, SQLITE_ONLY, testDatabaseFile } from '../helper.js'

const projects = buildModel(resources).get('projects')
const MINUTE_MS = 60_000

/** Claims `key` for the test's admin as a request `minutesAgo` would have, for a body that validates to `fields`. */
async function claimedEarlier (app: FastifyInstance, key: string, fields: Record<string, unknown>, minutesAgo: number) {
  const now = new Date(Date.now() - minutesAgo * MINUTE_MS)
  const claim = await app.store.idempotency.claim('test-admin', key, requestFingerprint('POST', '/v1/projects', fields), {
    now, expiresAt: new Date(now.getTime() + 24 * 60 * MINUTE_MS), staleBefore: new Date(now.getTime() - 5 * MINUTE_MS)
  })
  if (!claim.claimed) throw new Error(`${key} was already claimed`)
  return claim.held
}

const projectNamed = async (app: FastifyInstance, name: string) => body(await app.inject({ method: 'GET', url: `/v1/projects?name=${name}` }))

t.test('a retry with the same key and body replays the first response and creates nothing', async t => {
  const app = await buildTestApp(t)
  const first = await post(app, '/v1/projects', { name: 'once' }, { 'idempotency-key': 'create-once-1' })
  t.equal(first.statusCode, 201)
  t.notOk(first.headers['idempotent-replayed'])
  const retry = await post(app, '/v1/projects', { name: 'once' }, { 'idempotency-key': 'create-once-1' })
  t.equal(retry.statusCode, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.equal(retry.headers.location, first.headers.location)
  t.equal(retry.headers.etag, first.headers.etag)
  t.match(retry.headers['content-type'], /^application\/json/)
  t.same(body(retry), body(first))
  t.equal(body(await app.inject({ method: 'GET', url: '/v1/projects' })).length, 1, 'one project')

  const other = await post(app, '/v1/projects', { name: 'twice' }, { 'idempotency-key': 'create-once-1' })
  assertProblem(t, other, 422, 'idempotency-key-reused')
  const nested = await post(app, `${first.headers.location as string}/tasks`, { name: 't' }, { 'idempotency-key': 'nested-1' })
  const nestedRetry = await post(app, `${first.headers.location as string}/tasks`, { name: 't' }, { 'idempotency-key': 'nested-1' })
  t.equal(nestedRetry.headers['idempotent-replayed'], 'true')
  t.same(body(nestedRetry), body(nested))
})

t.test('keys are per credential; bad keys are 400; without a key nothing is remembered', async t => {
  const app = await buildTestApp(t)
  const alice = bearer({ sub: 'alice', scope: 'projects:write' })
  const bob = bearer({ sub: 'bob', scope: 'projects:write' })
  t.equal((await post(app, '/v1/projects', { name: 'a' }, { authorization: alice, 'idempotency-key': 'shared' })).statusCode, 201)
  const bobs = await post(app, '/v1/projects', { name: 'b' }, { authorization: bob, 'idempotency-key': 'shared' })
  t.equal(bobs.statusCode, 201)
  t.notOk(bobs.headers['idempotent-replayed'], 'another credential\'s key does not collide')
  // A token without sub is its own credential: its retries replay, and it shares keys with nobody.
  const anonymous = bearer({ scope: 'projects:write' })
  const first = await post(app, '/v1/projects', { name: 'n' }, { authorization: anonymous, 'idempotency-key': 'shared' })
  t.equal(first.statusCode, 201)
  t.notOk(first.headers['idempotent-replayed'], 'not another credential\'s replay')
  const retried = await post(app, '/v1/projects', { name: 'n' }, { authorization: anonymous, 'idempotency-key': 'shared' })
  t.equal(retried.headers['idempotent-replayed'], 'true')
  t.equal(retried.json().id, first.json().id)
  t.equal((await post(app, '/v1/projects', { name: 'n' }, { authorization: bearer({ scope: 'projects:write other:read' }), 'idempotency-key': 'shared' })).statusCode, 409, 'another such token runs the create itself: the name clashes')
  const bad = assertProblem(t, await post(app, '/v1/projects', { name: 'c' }, { 'idempotency-key': 'has space' }), 400)
  t.same(bad.errors, [{ in: 'header', pointer: '/Idempotency-Key', detail: 'must be 1 to 255 visible ASCII characters' }])
  assertProblem(t, await post(app, '/v1/projects', { name: 'd' }, { 'idempotency-key': 'x'.repeat(256) }), 400)
})

t.test('a replayed error stays the same error; a request still running is 409', async t => {
  const app = await buildTestApp(t)
  await post(app, '/v1/projects', { name: 'taken' })
  const clash = await post(app, '/v1/projects', { name: 'taken' }, { 'idempotency-key': 'clash' })
  t.equal(clash.statusCode, 409)
  const again = await post(app, '/v1/projects', { name: 'taken' }, { 'idempotency-key': 'clash' })
  t.equal(again.statusCode, 409)
  t.equal(again.headers['idempotent-replayed'], 'true')

  const now = new Date()
  const window = { now, expiresAt: new Date(now.getTime() + 60_000), staleBefore: new Date(now.getTime() - 60_000) }
  await app.store.idempotency.claim('test-admin', 'running', requestFingerprint('POST', '/v1/projects', { name: 'x', active: true, tags: [] /* as validated: defaults filled */ }), window)
  assertProblem(t, await post(app, '/v1/projects', { name: 'x' }, { 'idempotency-key': 'running' }), 409, 'idempotency-in-progress')
  assertProblem(t, await post(app, '/v1/projects', { name: 'y' }, { 'idempotency-key': 'running' }), 422, 'idempotency-key-reused')
})

t.test('a body its schema refuses claims no key: the corrected request runs under it', async t => {
  const app = await buildTestApp(t)
  const refused = assertProblem(t, await post(app, '/v1/tasks', { name: 5, projectId: 4242 }, { 'idempotency-key': 'fix-and-retry' }), 400, 'validation')
  t.equal(refused.errors.length, 2, 'the schema\'s fault and the missing project')
  const project = body(await post(app, '/v1/projects', { name: 'home' }))
  const corrected = await post(app, '/v1/tasks', { name: 'fixed', projectId: project.id }, { 'idempotency-key': 'fix-and-retry' })
  t.equal(corrected.statusCode, 201, 'not 422: the refused body never held the key')
  t.equal(corrected.headers['idempotent-replayed'], undefined)
  const retried = await post(app, '/v1/tasks', { name: 'fixed', projectId: project.id }, { 'idempotency-key': 'fix-and-retry' })
  t.equal(retried.headers['idempotent-replayed'], 'true')
  t.equal(body(retried).id, body(corrected).id)
})

t.test('concurrent duplicates through a real server: one runs, the others wait their turn or are refused', async t => {
  const app = await buildTestApp(t)
  const url = `${await listen(app)}/v1/projects`
  const responses = await Promise.all(Array.from({ length: 8 }, async () => {
    const response = await fetch(url, { method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json', 'idempotency-key': 'burst' }, body: '{"name":"burst"}' })
    await response.arrayBuffer()
    return { status: response.status, replayed: response.headers.get('idempotent-replayed') }
  }))
  t.equal(responses.filter(r => r.status === 201 && r.replayed === null).length, 1, 'exactly one request ran')
  t.ok(responses.every(r => r.status === 409 || (r.status === 201)), 'the rest are replays or 409 while it ran')
  const list = await app.inject({ method: 'GET', url: '/v1/projects?name=burst' })
  t.equal(body(list).length, 1, 'created once')
})

t.test('expired keys are forgotten and purged', async t => {
  const app = await buildTestApp(t)
  const { idempotency } = app.store
  const past = new Date(Date.now() - 48 * 3_600_000)
  await idempotency.claim('s', 'old', 'f', { now: past, expiresAt: new Date(past.getTime() + 24 * 3_600_000), staleBefore: past })
  await idempotency.complete('s', 'old', { status: 201, headers: {}, body: '{}' })
  t.equal(await idempotency.purge(new Date()), 1)
  const claim = await idempotency.claim('s', 'old', 'g', { now: new Date(), expiresAt: new Date(Date.now() + 1000), staleBefore: new Date() })
  t.equal(claim.claimed, true)

  // Expired but not yet purged: the key is free for a new request all the same.
  await idempotency.claim('s', 'lapsed', 'f', { now: past, expiresAt: new Date(past.getTime() + 24 * 3_600_000), staleBefore: past })
  await idempotency.complete('s', 'lapsed', { status: 201, headers: {}, body: '{}' })
  const fresh = { now: new Date(), expiresAt: new Date(Date.now() + 3_600_000), staleBefore: past }
  t.equal((await idempotency.claim('s', 'lapsed', 'g', fresh)).claimed, true, 'an expired record no longer holds its key')
  t.equal((await idempotency.claim('s', 'lapsed', 'g', fresh)).claimed, false, 'and the new claim does')
})

t.test('a create whose process died before it answered is answered by a retry, not made twice', async t => {
  const app = await buildTestApp(t)
  const fields = { name: 'survivor', active: true, tags: [] }
  // The first request's create committed (marking the key in its transaction); then the process died.
  const held = await claimedEarlier(app, 'crash-1', fields, 10)
  const created = await app.store.insert(projects, { ...fields, description: undefined, budget: undefined }, { idempotency: held })

  const retry = await post(app, '/v1/projects', { name: 'survivor' }, { 'idempotency-key': 'crash-1' })
  t.equal(retry.statusCode, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true', 'nothing new was created')
  t.equal(retry.headers.location, `/v1/projects/${created.id}`)
  t.equal(retry.headers.etag, (await app.inject({ method: 'GET', url: `/v1/projects/${created.id}` })).headers.etag)
  t.same(body(retry), body(await app.inject({ method: 'GET', url: `/v1/projects/${created.id}` })), 'the record the first request created')
  const again = await post(app, '/v1/projects', { name: 'survivor' }, { 'idempotency-key': 'crash-1' })
  t.equal(again.statusCode, 201)
  t.equal(again.body, retry.body, 'every retry gets the same answer')
  t.equal((await projectNamed(app, 'survivor')).length, 1, 'created once')

  // Its create committed a moment ago: what it created is settled, and a retry need not wait for its answer.
  const recent = await claimedEarlier(app, 'crash-2', { ...fields, name: 'recent' }, 0)
  const made = await app.store.insert(projects, { ...fields, name: 'recent', description: undefined, budget: undefined }, { idempotency: recent })
  const soon = await post(app, '/v1/projects', { name: 'recent' }, { 'idempotency-key': 'crash-2' })
  t.equal(soon.statusCode, 201)
  t.equal(soon.headers['idempotent-replayed'], 'true')
  t.equal(body(soon).id, made.id)
  t.equal((await projectNamed(app, 'recent')).length, 1, 'created once')
  assertProblem(t, await post(app, '/v1/projects', { name: 'other' }, { 'idempotency-key': 'crash-1' }), 422, 'idempotency-key-reused')
})

t.test('a create\'s answer is its record: a retry gets it as the create gave it, also after the record changed', async t => {
  const app = await buildTestApp(t)
  const first = await post(app, '/v1/projects', { name: 'as made', budget: 10 }, { 'idempotency-key': 'answer-1', prefer: 'return=representation' })
  t.equal(first.statusCode, 201)
  const location = first.headers.location as string
  const edited = await app.inject({ method: 'PATCH', url: location, payload: { budget: 20 } })
  t.equal(edited.statusCode, 200)
  const retry = await post(app, '/v1/projects', { name: 'as made', budget: 10 }, { 'idempotency-key': 'answer-1' })
  t.equal(retry.statusCode, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true')
  for (const name of ['location', 'etag', 'last-modified', 'content-type']) t.equal(retry.headers[name], first.headers[name], name)
  t.equal(retry.body, first.body, 'the record as it was created, not as it is now')
  t.not(retry.headers.etag, edited.headers.etag)

  const minimal = await post(app, '/v1/projects', { name: 'minimal' }, { 'idempotency-key': 'answer-2', prefer: 'return=minimal' })
  t.equal(minimal.statusCode, 201)
  t.equal(minimal.body, '')
  const minimalRetry = await post(app, '/v1/projects', { name: 'minimal' }, { 'idempotency-key': 'answer-2', prefer: 'return=minimal' })
  t.equal(minimalRetry.statusCode, 201)
  t.equal(minimalRetry.headers['idempotent-replayed'], 'true')
  t.equal(minimalRetry.headers.location, minimal.headers.location)
  t.equal(minimalRetry.headers['preference-applied'], 'return=minimal')
  t.equal(minimalRetry.body, '')
})

t.test('a request that ran past the stale limit and lost its key to a retry creates nothing', async t => {
  const app = await buildTestApp(t)
  const held = await claimedEarlier(app, 'slow-1', { name: 'slow', active: true, tags: [] }, 10)
  const retry = await post(app, '/v1/projects', { name: 'slow' }, { 'idempotency-key': 'slow-1' })
  t.equal(retry.statusCode, 201)
  t.notOk(retry.headers['idempotent-replayed'], 'nothing had been created: the retry ran')
  await t.rejects(app.store.insert(projects, { name: 'slow original', active: true, tags: [], description: undefined, budget: undefined }, { idempotency: held }),
    { code: 'RSY_ERR_IDEMPOTENCY_IN_PROGRESS' }, 'the original, finishing late, does not commit')
  t.equal((await projectNamed(app, 'slow original')).length, 0)
  t.equal((await projectNamed(app, 'slow')).length, 1)
})

t.test('a database from before creates marked their keys gets the column on start', { skip: SQLITE_ONLY }, async t => {
  const file = testDatabaseFile(t)
  const old = new BetterSqlite3(file)
  old.exec('create table "resourcery_idempotency" ("subject" text not null, "key" text not null, "fingerprint" text not null, "response" text, "createdAt" text not null, "expiresAt" text not null, constraint "resourcery_idempotency_pkey" primary key ("subject", "key"))')
  old.close()
  const app = await buildTestApp(t)
  const first = await post(app, '/v1/projects', { name: 'upgraded' }, { 'idempotency-key': 'after-upgrade' })
  t.equal(first.statusCode, 201)
  t.equal((await post(app, '/v1/projects', { name: 'upgraded' }, { 'idempotency-key': 'after-upgrade' })).headers['idempotent-replayed'], 'true')
})
