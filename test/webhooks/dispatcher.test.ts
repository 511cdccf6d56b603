// The dispatcher across restarts and processes: retries that survive a stop, a stop that waits for no receiver, deliveries shared by two processes, and retention.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import { openStore } from '../../src/store/open.js'
import type { Store } from '../../src/store/store.js'
import { buildTestApp, createProject, testStoreOptions } from '../helper.js'
import { ALLOW, attemptsOf, receiver, subscribe, watchWarnings } from './support.js'

const warnings = watchWarnings()

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

t.test('the rounds above, up to a batch of deliveries in flight at once, raised no warning', async t => {
  warnings.check(t)
})
