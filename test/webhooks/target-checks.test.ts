// Targets: private addresses refused at registration and at delivery, and names that do not resolve or whose resolver never answers.
import type { LookupAddress, LookupAllOptions } from 'node:dns'
import dns from 'node:dns/promises'
import { syncBuiltinESMExports } from 'node:module'
import t, { type Test } from 'tap'
import { assertProblem, bearer, body, buildTestApp, createProject, pointers, post } from '../helper.js'
import { ALLOW, attemptsOf, receiver, subscribe, watchWarnings } from './support.js'

const warnings = watchWarnings()

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

t.test('the rounds above, up to a batch of deliveries in flight at once, raised no warning', async t => {
  warnings.check(t)
})
