// Deliveries: what a subscription is sent, signed, retried, disabled, sent again, and as the document describes it.
import AjvModule from 'ajv'
import formatsModule from 'ajv-formats'
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, createProject, pointers, post, type Json } from '../helper.js'
import { ALLOW, attemptsOf, receiver, subscribe, verify, watchWarnings } from './support.js'

const warnings = watchWarnings()

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

t.test('every attempt stays reachable: pages of the deliveries, newest first, linked by before', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const hook = await receiver(t)
  const subscription = await subscribe(app, hook.url, ['projects.created'])
  for (let i = 0; i < 5; i++) await createProject(app, { name: `paged ${i}` })
  const all = await attemptsOf(app, subscription.id, 5)
  t.equal(all.length, 5)
  const path = `/v1/webhooks/${subscription.id as number}/deliveries`
  t.equal((await app.inject({ method: 'GET', url: path })).headers.link, `<${path}?limit=100>; rel="first"`, 'one page: no next')

  const seen: number[] = []
  let url: string | undefined = `${path}?limit=2`
  const links: string[] = []
  while (url !== undefined) {
    const page = await app.inject({ method: 'GET', url })
    t.equal(page.statusCode, 200, url)
    seen.push(...(body(page) as unknown as Json[]).map(attempt => attempt.id as number))
    const link = page.headers.link as string
    links.push(link)
    t.match(link, `<${path}?limit=2>; rel="first"`, 'the first page, with the same limit')
    url = /<([^>]+)>; rel="next"/.exec(link)?.[1]
  }
  t.same(seen, all.map(attempt => attempt.id), 'pages of 2, 2 and 1: every attempt once, newest first')
  t.equal(links.length, 3)
  t.same(links.map(link => link.includes('rel="next"')), [true, true, false], 'the last page has no next')
  t.match(links[0], `<${path}?limit=2&before=${all[1]!.id as number}>; rel="next"`, 'next starts after the page\'s last attempt')
  const first = await app.inject({ method: 'GET', url: `${path}?limit=2` })
  const revalidated = await app.inject({ method: 'GET', url: `${path}?limit=2`, headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(revalidated.statusCode, 304)
  t.equal(revalidated.headers.link, links[0], 'a 304 carries the page\'s links too')
  const refusedIfMatch = await app.inject({ method: 'GET', url: `${path}?limit=2`, headers: { 'if-match': first.headers.etag as string } })
  assertProblem(t, refusedIfMatch, 412)
  t.equal(refusedIfMatch.headers.link, undefined, 'a 412 has no page to link from')

  const since = await app.inject({ method: 'GET', url: `${path}?before=${all[0]!.id as number}` })
  t.same((body(since) as unknown as Json[]).map(attempt => attempt.id), all.slice(1).map(attempt => attempt.id), 'before excludes that attempt itself')
  for (const bad of ['0', 'abc', '1.5', '9007199254740992']) {
    const refused = assertProblem(t, await app.inject({ method: 'GET', url: `${path}?before=${bad}` }), 400, 'validation')
    t.same(pointers(refused), ['/before'], `before=${bad}`)
  }
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

  // A resend has no representation, so any If-Match fails: 412, and the delivery stays finished.
  const conditional = await app.inject({ method: 'POST', url: resendUrl(subscription.id, eventId), headers: { 'if-match': '*' } })
  t.equal(assertProblem(t, conditional, 412, 'precondition-failed').detail,
    `/v1/webhooks/${String(subscription.id)}/deliveries/${eventId}/resend has no representation for If-Match to name, so If-Match cannot hold (RFC 9110 §13.1.1); nothing was scheduled`)
  t.equal((await app.inject({ method: 'POST', url: resendUrl(subscription.id, eventId) })).statusCode, 202, 'nothing was scheduled by the 412, so the delivery can be resent')
  t.equal((await hook.count(3)).length, 3)
  t.same((await attemptsOf(app, subscription.id, 3)).map(attempt => attempt.attempt), [3, 2, 1], 'one attempt for the one resend that was scheduled')

  assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(subscription.id, 'msg_00000000000000000000000000000000') }), 404)
  assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(subscription.id, 'msg_00000000000000000000000000000000'), headers: { 'if-match': '*' } }), 404, 'not-found')
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
  assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(retrying.id, failed!.headers['webhook-id'] as string), headers: { 'if-match': '*' } }), 409, 'delivery-not-resendable')
  const off = assertProblem(t, await app.inject({ method: 'POST', url: resendUrl(disabled.id, refused!.headers['webhook-id'] as string) }), 409, 'delivery-not-resendable')
  t.match(off.detail, /disabled/)
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
  warnings.check(t)
})
