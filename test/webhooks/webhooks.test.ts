import { createHmac } from 'node:crypto'
import type { LookupAddress, LookupAllOptions } from 'node:dns'
import dns from 'node:dns/promises'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { syncBuiltinESMExports } from 'node:module'
import type { AddressInfo } from 'node:net'
import AjvModule from 'ajv'
import formatsModule from 'ajv-formats'
import { Type } from '@sinclair/typebox'
import t, { type Test } from 'tap'
import { belongsTo, defineResource, hasMany } from '../../src/resources/define.js'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import { openStore } from '../../src/store/open.js'
import type { Store } from '../../src/store/store.js'
import { assertProblem, bearer, body, buildTestApp, createProject, pointers, post, testStoreOptions, type Json } from '../helper.js'

interface Received { headers: IncomingHttpHeaders, body: string, at: number }

/** A local receiver answering each request with the next of `answers` (the last one repeats). */
async function receiver (t: Test, answers: Array<{ status: number, headers?: Record<string, string> }> = [{ status: 204 }]) {
  const received: Received[] = []
  const waiting: Array<() => void> = []
  const server = createServer((request, response) => {
    let text = ''
    request.on('data', chunk => { text += String(chunk) })
    request.on('end', () => {
      const answer = answers[Math.min(received.length, answers.length - 1)]!
      received.push({ headers: request.headers, body: text, at: Date.now() })
      response.writeHead(answer.status, answer.headers).end()
      waiting.splice(0).forEach(wake => { wake() })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    async count (n: number, timeoutMs = 10_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs
      while (received.length < n && Date.now() < deadline) await new Promise<void>(resolve => { waiting.push(resolve); setTimeout(resolve, 100) })
      return received
    }
  }
}

const ALLOW = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_POLL_MS: '50' }

// Every warning the process emits while this file runs: a round of deliveries must raise none (see the last test).
const warnings: Error[] = []
process.on('warning', warning => { warnings.push(warning) })

async function subscribe (app: Awaited<ReturnType<typeof buildTestApp>>, url: string, events: string[]): Promise<Json> {
  const created = await post(app, '/v1/webhooks', { url, events })
  if (created.statusCode !== 201) throw new Error(`subscribe: ${created.statusCode} ${created.body}`)
  return body(created)
}

/** The subscription's attempts, once at least `n` are recorded (a receiver sees a request before its attempt is stored). */
async function attemptsOf (app: Awaited<ReturnType<typeof buildTestApp>>, id: unknown, n: number): Promise<Json[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const attempts = body(await app.inject({ method: 'GET', url: `/v1/webhooks/${String(id)}/deliveries` })) as unknown as Json[]
    if (attempts.length >= n || Date.now() > deadline) return attempts
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

function verify (secret: string, received: Received): boolean {
  const id = received.headers['webhook-id'] as string
  const timestamp = received.headers['webhook-timestamp'] as string
  const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(`${id}.${timestamp}.${received.body}`).digest('base64')
  return (received.headers['webhook-signature'] as string).split(' ').includes(`v1,${expected}`)
}

t.test('a subscription gets every matching write, signed per Standard Webhooks', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const hook = await receiver(t)
  const subscription = await subscribe(app, hook.url, ['tasks.*', 'projects.created'])
  t.match(subscription.secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'the secret is shown once')
  t.equal(subscription.active, true)
  const listed = body(await app.inject({ method: 'GET', url: '/v1/webhooks' })) as unknown as Json[]
  t.notOk('secret' in listed[0]!, 'never listed')
  t.notOk('secret' in body(await app.inject({ method: 'GET', url: `/v1/webhooks/${subscription.id as number}` })))

  const project = await createProject(app, { name: 'hooked' })
  const task = body(await post(app, '/v1/tasks', { name: 'first', projectId: project.id }))
  await app.inject({ method: 'PATCH', url: `/v1/tasks/${task.id as number}`, payload: { status: 'done' }, headers: { 'content-type': 'application/merge-patch+json' } })
  await app.inject({ method: 'PATCH', url: `/v1/projects/${project.id as number}`, payload: { budget: 5 }, headers: { 'content-type': 'application/merge-patch+json' } })
  await app.inject({ method: 'DELETE', url: `/v1/tasks/${task.id as number}` })

  const received = await hook.count(4)
  const events = received.map(item => JSON.parse(item.body) as Json)
  t.same(events.map(event => event.type).sort(), ['projects.created', 'tasks.created', 'tasks.deleted', 'tasks.updated'], 'projects.updated was not subscribed')
  for (const item of received) {
    t.ok(verify(subscription.secret as string, item), 'signature verifies with the secret')
    t.match(item.headers['webhook-id'], /^msg_/)
    t.equal(item.headers['content-type'], 'application/json')
    t.ok(Math.abs(Number(item.headers['webhook-timestamp']) - Date.now() / 1000) < 60)
    const event = JSON.parse(item.body) as Json
    t.equal(event.id, item.headers['webhook-id'], 'the body id is the webhook-id')
    t.ok(!Number.isNaN(Date.parse(event.timestamp as string)))
  }
  const updated = events.find(event => event.type === 'tasks.updated')!
  t.equal(updated.data.status, 'done', 'data is the record as written')
  t.equal(updated.data.id, task.id)
  t.same(events.find(event => event.type === 'tasks.deleted')!.data, { id: task.id })
  t.equal(events.find(event => event.type === 'projects.created')!.data.name, 'hooked')

  const attempts = await attemptsOf(app, subscription.id, 4)
  t.equal(attempts.length, 4)
  t.ok(attempts.every(attempt => attempt.outcome === 'succeeded' && attempt.responseStatus === 204 && attempt.attempt === 1))

  // Retention: everything finished before the cut-off is forgotten.
  t.equal(await app.store.webhooks.purge(new Date(Date.now() - 60_000).toISOString()), 0, 'nothing is older than a minute')
  t.equal(await app.store.webhooks.purge(new Date(Date.now() + 1000).toISOString()), 4)
  t.same(body(await app.inject({ method: 'GET', url: `/v1/webhooks/${subscription.id as number}/deliveries` })), [])
  const purged = await app.inject({ method: 'POST', url: `/v1/webhooks/${subscription.id as number}/deliveries/${attempts[0]!.eventId as string}/resend` })
  assertProblem(t, purged, 404, 'not-found')
})

t.test('writes made at once each send their event once a subscription exists, and none before', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const hook = await receiver(t)
  // Made together, so that on SQLite they commit in one transaction (group commit).
  const together = async (label: string): Promise<void> => {
    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => await post(app, '/v1/projects', { name: `${label} ${i}` })))
    t.ok(answers.every(answer => answer.statusCode === 201), `${label}: 20 created`)
  }
  await together('unheard')
  const subscription = await subscribe(app, hook.url, ['projects.created'])
  await together('heard')
  await attemptsOf(app, subscription.id, 20)
  const names = (await hook.count(20)).map(item => (JSON.parse(item.body) as Json).data.name as string)
  t.same(names.sort(), Array.from({ length: 20 }, (_, i) => `heard ${i}`).sort(), 'each write after subscribing, once; none from before')
})

t.test('an event carries the record as a GET shows it: never a write-only value', async t => {
  const vaults = defineResource({ collection: 'vaults', fields: Type.Object({ name: Type.String(), pin: Type.String({ writeOnly: true }) }) })
  const app = await buildTestApp(t, { env: ALLOW, definitions: [vaults] })
  const hook = await receiver(t)
  await subscribe(app, hook.url, ['vaults.*'])
  const vault = body(await post(app, '/v1/vaults', { name: 'safe', pin: '4821' }))
  await app.inject({ method: 'PATCH', url: `/v1/vaults/${vault.id as number}`, payload: { pin: '9377' }, headers: { 'content-type': 'application/merge-patch+json' } })
  const received = await hook.count(2)
  t.same(received.map(item => (JSON.parse(item.body) as Json).type), ['vaults.created', 'vaults.updated'])
  for (const item of received) {
    t.same(Object.keys((JSON.parse(item.body) as Json).data as Json).sort(), ['createdAt', 'id', 'links', 'name', 'updatedAt'])
    t.notMatch(item.body, /4821|9377/, 'no pin in the body')
  }
})

t.test('failures are retried with backoff, honouring Retry-After; the same id and body every time', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const hook = await receiver(t, [{ status: 500 }, { status: 503, headers: { 'retry-after': '1' } }, { status: 200 }])
  const subscription = await subscribe(app, hook.url, ['projects.created'])
  await createProject(app, { name: 'flaky' })
  const received = await hook.count(3)
  t.equal(received.length, 3)
  t.equal(new Set(received.map(item => item.headers['webhook-id'])).size, 1, 'one event id across attempts')
  t.equal(new Set(received.map(item => item.body)).size, 1, 'the same body')
  t.ok(received[2]!.at - received[1]!.at >= 950, `Retry-After: 1 was waited for (${received[2]!.at - received[1]!.at} ms)`)
  const attempts = await attemptsOf(app, subscription.id, 3)
  t.same(attempts.map(attempt => [attempt.attempt, attempt.outcome, attempt.responseStatus]), [[3, 'succeeded', 200], [2, 'retrying', 503], [1, 'retrying', 500]])
  t.ok(attempts[2]!.nextAttemptAt !== null && attempts[2]!.error === 'HTTP 500')
})

t.test('410 Gone disables the subscription; redirects are not followed', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const gone = await receiver(t, [{ status: 410 }])
  const moved = await receiver(t, [{ status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } }])
  const disabled = await subscribe(app, gone.url, ['projects.*'])
  const redirected = await subscribe(app, moved.url, ['projects.*'])
  await createProject(app, { name: 'one' })
  await gone.count(1)
  await moved.count(1)
  await new Promise(resolve => setTimeout(resolve, 300))
  const view = body(await app.inject({ method: 'GET', url: `/v1/webhooks/${disabled.id as number}` }))
  t.equal(view.active, false)
  t.match(view.disabledReason, /410/)
  await createProject(app, { name: 'two' })
  await moved.count(2)
  t.equal(gone.received.length, 1, 'nothing more is sent to a disabled subscription')
  const attempts = await attemptsOf(app, redirected.id, 1)
  t.ok(attempts.some(attempt => attempt.responseStatus === 302 && /redirect/.test(attempt.error as string)), 'a redirect is a failed attempt')
})

t.test('private targets are refused at registration and at delivery', async t => {
  const strict = await buildTestApp(t)
  for (const url of ['http://127.0.0.1:9/hook', 'http://localhost/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/hook', 'http://10.1.2.3/', 'http://[::ffff:192.168.0.1]/']) {
    const refused = await post(strict, '/v1/webhooks', { url, events: ['*'] })
    assertProblem(t, refused, 400)
    t.same(pointers(body(refused)), ['/url'], url)
  }
  const badEvents = await post(strict, '/v1/webhooks', { url: 'https://93.184.215.14/hook', events: ['widgets.created', 'tasks.renamed'] })
  assertProblem(t, badEvents, 400)
  t.same(pointers(body(badEvents)).sort(), ['/events/0', '/events/1'])
  assertProblem(t, await post(strict, '/v1/webhooks', { url: 'ftp://example.com/', events: ['*'] }), 400)
  const everything = assertProblem(t, await post(strict, '/v1/webhooks', { url: 'http://10.1.2.3/', events: ['widgets.created', 5], colour: 'red' }), 400, 'validation')
  t.same(pointers(everything), ['/colour', '/events/0', '/events/1', '/url'], 'one 400 names the schema\'s faults and the address and event checks\' together')
  for (const url of ['http://[::1]:99999/', 'https://93.184.215.14:70000/hook']) {
    const unparsable = assertProblem(t, await post(strict, '/v1/webhooks', { url, events: ['*'] }), 400, 'validation')
    t.same(unparsable.errors, [{ in: 'body', pointer: '/url', detail: 'is not a URL this service can send to' }], `${url}: a port JSON Schema's uri lets pass`)
  }
  t.equal(body(await strict.inject({ method: 'GET', url: '/v1/webhooks' })).length, 0, 'nothing was subscribed')
  const noAdmin = await post(strict, '/v1/webhooks', { url: 'https://93.184.215.14/hook', events: ['*'] }, { authorization: bearer({ sub: 'reader', scope: 'projects:read' }) })
  t.ok([401, 403].includes(noAdmin.statusCode))
})

t.test('a name that does not resolve yet is subscribed, and each delivery to it is a failed attempt, retried', async t => {
  const app = await buildTestApp(t, { env: { WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_POLL_MS: '50' } })
  // .invalid never resolves (RFC 6761): as a name whose DNS is not set up yet, or a machine with no resolver.
  const created = await post(app, '/v1/webhooks', { url: 'https://hooks.invalid/in', events: ['projects.created'] })
  t.equal(created.statusCode, 201)
  t.match(body(created), { url: 'https://hooks.invalid/in', active: true, secret: /^whsec_/ })
  await createProject(app, { name: 'to nowhere' })
  const [attempt] = await attemptsOf(app, body(created).id, 1)
  t.match(attempt, { outcome: 'retrying', responseStatus: null, error: /^refused: hooks\.invalid does not resolve/ })
})

/**
 * Names under stalled.test get no answer, as from a resolver that does not respond
 * (getaddrinfo then waits out its own time-outs and retries, tens of seconds), until
 * `restore`, or the test's end, when they fail as such a resolver's finally do. The lookup
 * the service imported is replaced until then; `stalling` tells when a lookup first
 * stalls, and `started` counts the stalled lookups begun.
 */
function stallLookups (t: Test): { stalling: Promise<void>, restore: () => void, readonly started: number } {
  const real = dns.lookup
  const stalled: Array<(error: Error) => void> = []
  let stalledFirst: () => void = () => {}
  const stalling = new Promise<void>(resolve => { stalledFirst = resolve })
  const stallingLookup = async (hostname: string, options: LookupAllOptions): Promise<LookupAddress[]> => {
    if (!hostname.endsWith('.stalled.test')) return await real(hostname, options)
    stalledFirst()
    return await new Promise((_resolve, reject) => { stalled.push(reject) })
  }
  dns.lookup = stallingLookup as typeof real
  syncBuiltinESMExports()
  const restore = (): void => {
    dns.lookup = real
    syncBuiltinESMExports()
    for (const fail of stalled) fail(Object.assign(new Error('queryA ETIMEOUT'), { code: 'ETIMEOUT' }))
  }
  t.teardown(restore)
  return { stalling, restore, get started () { return stalled.length } }
}

t.test('a name whose resolver never answers is given up after WEBHOOK_TIMEOUT_MS: subscribed, and its delivery a failed attempt that holds up no other', async t => {
  const lookups = stallLookups(t)
  const app = await buildTestApp(t, { env: { ...ALLOW, WEBHOOK_TIMEOUT_MS: '300' } })
  const hook = await receiver(t)
  const started = Date.now()
  const stalled = []
  for (const name of ['one', 'two', 'three']) stalled.push(await subscribe(app, `https://${name}.stalled.test/in`, ['projects.created']))
  t.ok(Date.now() - started < 5000, 'each registration waited for the bound, not for the resolver')
  await subscribe(app, hook.url, ['projects.created'])
  await createProject(app, { name: 'first' })
  const [attempt] = await attemptsOf(app, stalled[0]!.id, 1)
  t.match(attempt, { outcome: 'retrying', responseStatus: null, error: 'refused: one.stalled.test did not resolve within 300 ms' })
  t.match((await attemptsOf(app, stalled[2]!.id, 1))[0], { outcome: 'retrying', error: 'refused: three.stalled.test did not resolve within 300 ms' })
  t.equal(lookups.started, 2, 'lookups that never return take two of the thread pool\'s four threads, and no more: the third name\'s never started')
  // A round ends when all its deliveries have: the next write's event is sent by a later round.
  await createProject(app, { name: 'second' })
  const received = await hook.count(2)
  t.same(received.map(request => (JSON.parse(request.body) as { data: { name: string } }).data.name), ['first', 'second'], 'the round with the stalled lookup ended, and the next one ran')

  // The resolver gives up at last: the threads come back, and the next lookups run (and fail as the names do).
  lookups.restore()
  await createProject(app, { name: 'after' })
  const later = await attemptsOf(app, stalled[2]!.id, 3)
  t.match(later[0], { outcome: 'retrying', error: /^refused: three\.stalled\.test does not resolve \(/ })
})

t.test('stopping does not wait for a name still being looked up: the attempt is recorded, and retried after the restart', async t => {
  const env = { ...ALLOW, WEBHOOK_TIMEOUT_MS: '60000' }
  const first = await buildTestApp(t, { env })
  // Registered while the name fails at once (as .test names do here); then its resolver stops answering.
  const subscription = await subscribe(first, 'https://hooks.stalled.test/in', ['projects.created'])
  const lookups = stallLookups(t)
  await createProject(first, { name: 'sent while stopping' })
  // The dispatcher's timers do not hold the process open; this one does, until the lookup has stalled.
  const waited = await Promise.race([lookups.stalling.then(() => 'stalled'), new Promise(resolve => setTimeout(resolve, 10_000, 'no lookup'))])
  t.equal(waited, 'stalled', 'the delivery is looking its target up')
  const stopped = await Promise.race([first.close().then(() => 'stopped'), new Promise(resolve => setTimeout(resolve, 10_000, 'still waiting'))])
  t.equal(stopped, 'stopped', 'the close did not wait out the 60 s the lookup may take')

  // The resolver answers again (the name does not exist, as before): the next process tries once more.
  lookups.restore()
  const second = await buildTestApp(t, { env })
  t.match(await attemptsOf(second, subscription.id, 2), [
    { outcome: 'retrying', error: /^refused: hooks\.stalled\.test does not resolve/ },
    { outcome: 'retrying', responseStatus: null, error: 'refused: hooks.stalled.test was not resolved before the service stopped' }
  ])
  await second.close()
})

t.test('a pending retry survives a restart and is delivered; a target that became private is refused then', async t => {
  const hook = await receiver(t, [{ status: 503, headers: { 'retry-after': '1' } }, { status: 204 }])
  const first = await buildTestApp(t, { env: ALLOW })
  const subscription = await subscribe(first, hook.url, ['projects.created'])
  await createProject(first, { name: 'before restart' })
  await hook.count(1)
  await attemptsOf(first, subscription.id, 1)
  // The process stops with the retry still to come; the next one finds it in the database.
  await first.close()
  const second = await buildTestApp(t, { env: ALLOW })
  await second.ready()
  const received = await hook.count(2)
  t.equal(received.length, 2)
  t.equal(received[1]!.headers['webhook-id'], received[0]!.headers['webhook-id'], 'the same event, retried')
  t.same((await attemptsOf(second, subscription.id, 2)).map(attempt => attempt.outcome), ['succeeded', 'retrying'])
  await second.close()

  // The same subscription, now seen by a process that does not allow private targets.
  const strict = await buildTestApp(t, { env: { WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_POLL_MS: '50' } })
  await createProject(strict, { name: 'refused' })
  const attempts = await attemptsOf(strict, subscription.id, 3)
  t.equal(hook.received.length, 2, 'nothing sent to a private address')
  t.match(attempts[0], { outcome: 'retrying', responseStatus: null, error: /refused: .*private/ })
})

t.test('stopping does not wait for a receiver slow to answer: the attempt is ended, recorded and retried after the restart', async t => {
  // The first request is never answered; later ones are.
  const ids: string[] = []
  let firstArrived: () => void = () => {}
  const arrived = new Promise<void>(resolve => { firstArrived = resolve })
  const slow = createServer((request, response) => {
    ids.push(String(request.headers['webhook-id']))
    request.resume()
    if (ids.length === 1) firstArrived()
    else request.on('end', () => response.writeHead(204).end())
  })
  await new Promise<void>(resolve => slow.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { slow.closeAllConnections(); slow.close() })
  const env = { ...ALLOW, WEBHOOK_TIMEOUT_MS: '60000' }
  const first = await buildTestApp(t, { env })
  const subscription = await subscribe(first, `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`, ['projects.created'])
  await createProject(first, { name: 'sent while stopping' })
  await arrived
  const stopped = await Promise.race([first.close().then(() => 'stopped'), new Promise(resolve => setTimeout(resolve, 10_000, 'still waiting'))])
  t.equal(stopped, 'stopped', 'the close did not wait out the 60 s the receiver may take')

  const second = await buildTestApp(t, { env })
  await second.ready()
  const attempts = await attemptsOf(second, subscription.id, 2)
  t.equal(ids.length, 2)
  t.equal(ids[1], ids[0], 'the same event, sent again')
  t.match(attempts, [{ outcome: 'succeeded', responseStatus: 204 }, { outcome: 'retrying', responseStatus: null, error: 'the service stopped before the receiver answered' }])
  await second.close()
})

t.test('two processes on one database share the deliveries: each event is sent once', async t => {
  const hook = await receiver(t)
  const one = await buildTestApp(t, { env: ALLOW })
  const two = await buildTestApp(t, { env: ALLOW })
  await Promise.all([one.ready(), two.ready()])
  await subscribe(one, hook.url, ['projects.created'])
  await Promise.all(Array.from({ length: 20 }, async (_, i) => await createProject(i % 2 === 0 ? one : two, { name: `shared ${i}` })))
  const received = await hook.count(20)
  await new Promise(resolve => setTimeout(resolve, 500))
  t.equal(received.length, 20, 'no event sent twice')
  t.equal(new Set(received.map(item => item.headers['webhook-id'])).size, 20, 'every event once')
})

t.test('a delete that cascades sends a deleted event for every record it took with it', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const hook = await receiver(t)
  await subscribe(app, hook.url, ['*.deleted'])
  const project = await createProject(app)
  const tasks = await Promise.all([1, 2, 3].map(async n => body(await post(app, '/v1/tasks', { name: `child ${n}`, projectId: project.id }))))
  const other = await createProject(app)
  const kept = body(await post(app, '/v1/tasks', { name: 'elsewhere', projectId: other.id }))
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/projects/${project.id as number}` })).statusCode, 204)
  const events = (await hook.count(4)).map(item => JSON.parse(item.body) as Json)
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal(hook.received.length, 4, 'one event per deleted record, none for the other project\'s task')
  t.same(events.filter(event => event.type === 'projects.deleted').map(event => event.data), [{ id: project.id }])
  t.same(events.filter(event => event.type === 'tasks.deleted').map(event => event.data.id).sort(), tasks.map(task => task.id).sort())
  t.equal((await app.inject({ method: 'GET', url: `/v1/tasks/${kept.id as number}` })).statusCode, 200)

  // Children added while the parent is being deleted: each either lands before the delete (and gets its event) or is refused.
  const racing = await createProject(app)
  hook.received.length = 0
  const [adds, removed] = await Promise.all([
    Promise.all(Array.from({ length: 40 }, async (_, n) => {
      await new Promise(resolve => setTimeout(resolve, n))
      return await post(app, '/v1/tasks', { name: `racer ${n}`, projectId: racing.id })
    })),
    new Promise(resolve => setTimeout(resolve, 20)).then(async () => await app.inject({ method: 'DELETE', url: `/v1/projects/${racing.id as number}` }))
  ])
  t.equal(removed.statusCode, 204)
  const landed = adds.filter(add => add.statusCode === 201).map(add => body(add).id as number)
  t.comment(`${landed.length} of 40 children landed before the delete`)
  t.ok(adds.every(add => add.statusCode === 201 || add.statusCode === 400), 'a child of a deleted parent is refused')
  const raced = (await hook.count(landed.length + 1)).map(item => JSON.parse(item.body) as Json)
  await new Promise(resolve => setTimeout(resolve, 300))
  t.same(raced.filter(event => event.type === 'tasks.deleted').map(event => event.data.id as number).sort((a, b) => a - b), landed.sort((a, b) => a - b), 'every child that landed has its event')
})

t.test('cascades are followed down every level, however many records they take', async t => {
  const boards = defineResource({ collection: 'boards', fields: Type.Object({ name: Type.String() }), relations: { columns: hasMany('columns', { foreignKey: 'boardId', onDelete: 'cascade' }) } })
  const columns = defineResource({
    collection: 'columns',
    fields: Type.Object({ name: Type.String(), boardId: Type.Integer() }),
    relations: { board: belongsTo('boards', { foreignKey: 'boardId' }), cards: hasMany('cards', { foreignKey: 'columnId', onDelete: 'cascade' }) }
  })
  const cards = defineResource({ collection: 'cards', fields: Type.Object({ name: Type.String(), columnId: Type.Integer() }), relations: { column: belongsTo('columns', { foreignKey: 'columnId' }) } })
  const app = await buildTestApp(t, { env: ALLOW, definitions: [boards, columns, cards] })
  const hook = await receiver(t)
  await subscribe(app, hook.url, ['columns.deleted', 'cards.deleted'])
  const board = body(await post(app, '/v1/boards', { name: 'big' }))
  // More columns than one query asks about (500) and more events than one insert holds (200).
  const columnIds: number[] = []
  for (let i = 0; i < 502; i++) columnIds.push(body(await post(app, '/v1/columns', { name: `column ${i}`, boardId: board.id })).id as number)
  const cardIds = [body(await post(app, '/v1/cards', { name: 'first', columnId: columnIds[0] })).id, body(await post(app, '/v1/cards', { name: 'last', columnId: columnIds[501] })).id]
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/boards/${board.id as number}` })).statusCode, 204)
  const events = (await hook.count(504, 30_000)).map(item => JSON.parse(item.body) as Json)
  t.same(events.filter(event => event.type === 'columns.deleted').map(event => event.data.id).sort((a, b) => a - b), columnIds)
  t.same(events.filter(event => event.type === 'cards.deleted').map(event => event.data.id).sort((a, b) => a - b), cardIds)
})

t.test('a cascade declared only on the belongs-to side sends the deleted events too', async t => {
  // No has-many on boards: cards say how their board's delete treats them, and stickers refuse it.
  const boards = defineResource({ collection: 'boards', fields: Type.Object({ name: Type.String() }) })
  const cards = defineResource({ collection: 'cards', fields: Type.Object({ name: Type.String(), boardId: Type.Integer() }), relations: { board: belongsTo('boards', { foreignKey: 'boardId', onDelete: 'cascade' }) } })
  const stickers = defineResource({ collection: 'stickers', fields: Type.Object({ name: Type.String(), cardId: Type.Integer() }), relations: { card: belongsTo('cards', { foreignKey: 'cardId' }) } })
  const app = await buildTestApp(t, { env: ALLOW, definitions: [boards, cards, stickers] })
  const hook = await receiver(t)
  await subscribe(app, hook.url, ['*.deleted'])
  const board = body(await post(app, '/v1/boards', { name: 'b' }))
  const cardIds = await Promise.all([1, 2].map(async n => body(await post(app, '/v1/cards', { name: `card ${n}`, boardId: board.id })).id as number))
  // Before, the database cascaded and no cards.deleted was ever sent.
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/boards/${board.id as number}` })).statusCode, 204)
  const events = (await hook.count(3)).map(item => JSON.parse(item.body) as Json)
  t.same(events.filter(event => event.type === 'cards.deleted').map(event => event.data.id as number).sort((a, b) => a - b), cardIds.sort((a, b) => a - b))

  // A restriction declared only on the belongs-to side names what holds the record back.
  const kept = body(await post(app, '/v1/cards', { name: 'held', boardId: body(await post(app, '/v1/boards', { name: 'c' })).id }))
  await post(app, '/v1/stickers', { name: 's', cardId: kept.id })
  const refused = assertProblem(t, await app.inject({ method: 'DELETE', url: `/v1/cards/${kept.id as number}` }), 409, 'still-referenced')
  t.equal(refused.detail, 'this card is still referenced by 1 stickers; delete or move them first')
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  t.equal(document.paths['/v1/boards/{id}'].delete.responses['204'].description, 'Deleted, together with the cards that refer to it.')
  t.ok(document.paths['/v1/cards/{id}'].delete.responses['409'], 'a card\'s delete documents its 409')
})

t.test('a finished delivery can be sent again, the same event freshly signed; not one still pending, nor to a disabled subscription', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const hook = await receiver(t)
  const subscription = await subscribe(app, hook.url, ['projects.created'])
  await createProject(app, { name: 'resent' })
  const [first] = await hook.count(1)
  const eventId = first!.headers['webhook-id'] as string
  await attemptsOf(app, subscription.id, 1)
  const resendUrl = (id: unknown, event: string): string => `/v1/webhooks/${String(id)}/deliveries/${event}/resend`

  const resent = await app.inject({ method: 'POST', url: resendUrl(subscription.id, eventId) })
  t.equal(resent.statusCode, 202)
  t.equal(resent.body, '')
  const again = (await hook.count(2))[1]!
  t.equal(again.headers['webhook-id'], eventId, 'the same event id, so receivers can tell a repeat')
  t.equal(again.body, first!.body)
  t.ok(verify(subscription.secret as string, again), 'signed afresh')
  const attempts = await attemptsOf(app, subscription.id, 2)
  t.same(attempts.map(attempt => [attempt.attempt, attempt.outcome]), [[2, 'succeeded'], [1, 'succeeded']])

  assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(subscription.id, 'msg_00000000000000000000000000000000') }), 404)
  assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(999, eventId) }), 404)
  t.same(pointers(assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(subscription.id, 'nope') }), 400)), ['/eventId'])

  const failing = await receiver(t, [{ status: 503 }])
  const retrying = await subscribe(app, failing.url, ['projects.created'])
  const gone = await receiver(t, [{ status: 410 }])
  const disabled = await subscribe(app, gone.url, ['projects.created'])
  await createProject(app, { name: 'unlucky' })
  const [failed] = await failing.count(1)
  const [refused] = await gone.count(1)
  await attemptsOf(app, retrying.id, 1)
  await attemptsOf(app, disabled.id, 1)
  const pending = assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(retrying.id, failed!.headers['webhook-id'] as string) }), 409, 'delivery-not-resendable')
  t.match(pending.detail, /already scheduled/)
  const off = assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(disabled.id, refused!.headers['webhook-id'] as string) }), 409, 'delivery-not-resendable')
  t.match(off.detail, /disabled/)
})

t.test('the dispatcher purges history older than WEBHOOK_RETENTION', async t => {
  const real = await openStore(buildModel(resources), await testStoreOptions(t))
  const cutoffs: string[] = []
  const store: Store = {
    ...real,
    webhooks: { ...real.webhooks, purge: async before => { cutoffs.push(before); return await real.webhooks.purge(before) } }
  }
  const app = await buildTestApp(t, { store, env: { ...ALLOW, WEBHOOK_RETENTION: '3d' } })
  await app.ready()
  for (let waited = 0; cutoffs.length === 0 && waited < 5000; waited += 20) await new Promise(resolve => setTimeout(resolve, 20))
  t.equal(cutoffs.length, 1, 'purged once at start, then hourly')
  t.ok(Math.abs(Date.parse(cutoffs[0]!) - (Date.now() - 3 * 86_400_000)) < 60_000, `cut-off ${cutoffs[0]!} is three days ago`)
})

t.test('the OpenAPI document describes every event, and what is sent matches it', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const types = ['projects', 'tasks', 'notes', 'labels'].flatMap(collection => ['created', 'updated', 'deleted'].map(kind => `${collection}.${kind}`))
  t.same(Object.keys(document.webhooks as Json).sort(), types.sort())
  const operation = document.webhooks['tasks.updated'].post as Json
  t.same((operation.parameters as Json[]).map(parameter => parameter.name), ['webhook-id', 'webhook-timestamp', 'webhook-signature'])

  const hook = await receiver(t)
  await subscribe(app, hook.url, ['*'])
  const project = await createProject(app, { name: 'documented' })
  await app.inject({ method: 'PATCH', url: `/v1/projects/${project.id as number}`, payload: { budget: 7 }, headers: { 'content-type': 'application/merge-patch+json' } })
  await app.inject({ method: 'DELETE', url: `/v1/projects/${project.id as number}` })
  const Ajv = AjvModule.default
  const ajv = new Ajv({ strict: false })
  formatsModule.default(ajv)
  for (const item of await hook.count(3)) {
    const event = JSON.parse(item.body) as Json
    const schema = document.webhooks[event.type as string].post.requestBody.content['application/json'].schema as Json
    const validate = ajv.compile({ components: document.components, ...schema })
    t.ok(validate(event), `${event.type as string} matches its documented body: ${ajv.errorsText(validate.errors)}`)
  }
})

t.test('the rounds above, up to a batch of deliveries in flight at once, raised no warning', async t => {
  // Each attempt listens for the stop while in flight: past Node's default of 10 listeners it warned of a leak.
  t.same(warnings.map(warning => `${warning.name}: ${warning.message}`), [])
})
