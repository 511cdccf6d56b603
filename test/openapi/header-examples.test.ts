// Every response header the document lists, and every path parameter, is shown with an example,
// and the examples are what real answers carry: the same value where the example's situation can be
// made (the first record, the second page of 95, a credential's first request), else the same form.
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { resources } from '../../schemas/index.js'
import { Settings } from '../../src/config.js'
import { EXAMPLE_ID } from '../../src/resources/header-examples.js'
import { buildModel } from '../../src/resources/model.js'
import { openStore } from '../../src/store/open.js'
import { bearer, body, buildTestApp, post, testStoreOptions } from '../helper.js'

interface HeaderObject { schema: { type: string }, example?: unknown, $ref?: string }
interface Parameter { in: string, name: string, schema: { type?: string, minimum?: number, pattern?: string }, example?: unknown }
interface Operation { parameters?: Parameter[], responses: Record<string, { headers?: Record<string, HeaderObject> }> }

const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const STRONG_TAG = /^"[A-Za-z0-9_-]+(\.\d+\.\d+)?"$/
const WEAK_TAG = /^W\/"[A-Za-z0-9_-]+(\.[a-z0-9]+)?"$/

const app = await buildTestApp(t)
const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>)
  .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })))

/** A response header as the document gives it, a reference followed. */
const resolved = (header: HeaderObject): HeaderObject =>
  header.$ref === undefined ? header : document.components.headers[header.$ref.replace('#/components/headers/', '')] as HeaderObject

/** The example of header `name` on the `status` answer of `method path`. */
function example (path: string, method: string, status: number, name: string): unknown {
  const header = document.paths[path]?.[method]?.responses[String(status)]?.headers?.[name] as HeaderObject | undefined
  if (header === undefined) throw new Error(`${method.toUpperCase()} ${path} ${status} documents no ${name}`)
  return resolved(header).example
}

/** A header of a real answer, as the document's examples write it (integers as numbers). */
const sent = (response: LightMyRequestResponse, name: string): string | number | undefined => {
  const value = response.headers[name.toLowerCase()]
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value as string | undefined
}

t.test('every documented response header has an example of its own type', async t => {
  const wrong: string[] = []
  let headers = 0
  for (const { path, method, operation } of operations) {
    for (const [status, response] of Object.entries(operation.responses)) {
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        const { schema, example: value } = resolved(header)
        const fits = schema.type === 'integer' ? Number.isInteger(value) : typeof value === 'string' && value.length > 0
        if (!fits) wrong.push(`${method.toUpperCase()} ${path} ${status} ${name}: ${JSON.stringify(value)} for a ${schema.type}`)
        headers++
      }
    }
  }
  t.same(wrong, [], 'no header without a fitting example')
  t.ok(headers > 3000, `${headers} headers checked`)
})

t.test('every path parameter has an example its schema takes, and the problem examples are about it', async t => {
  const wrong: string[] = []
  let parameters = 0
  for (const { path, method, operation } of operations) {
    for (const { name, schema, example: value } of (operation.parameters ?? []).filter(one => one.in === 'path')) {
      const fits = schema.type === 'integer'
        ? Number.isInteger(value) && (value as number) >= (schema.minimum ?? 0)
        : typeof value === 'string' && new RegExp(schema.pattern ?? '.').test(value)
      if (!fits) wrong.push(`${method.toUpperCase()} ${path} {${name}}: ${JSON.stringify(value)}`)
      parameters++
    }
  }
  t.same(wrong, [], 'no path parameter without a fitting example')
  t.ok(parameters >= 25, `${parameters} path parameters checked`)
  t.equal(document.paths['/v1/tasks/{id}'].get.parameters.find((one: Parameter) => one.name === 'id').example, EXAMPLE_ID, 'the id the 404 example names')
})

t.test('an operation on one record shows one record: the path\'s id is the id of the body it answers and of the record its 404 names', async t => {
  const wrong: string[] = []
  let bodies = 0
  for (const { path, method, operation } of operations.filter(one => one.path.endsWith('/{id}'))) {
    const id = operation.parameters?.find(one => one.in === 'path' && one.name === 'id')?.example
    const where = `${method.toUpperCase()} ${path}`
    if (id !== EXAMPLE_ID) wrong.push(`${where}: the path's example id is ${JSON.stringify(id)}`)
    const reference = (operation.responses['200'] as { content?: Record<string, { schema?: { $ref?: string } }> } | undefined)?.content?.['application/json']?.schema?.$ref
    if (reference !== undefined) {
      const shown = (document.components.schemas[reference.replace('#/components/schemas/', '')].examples as Array<{ id?: unknown }> | undefined)?.[0]
      if (shown?.id !== id) wrong.push(`${where}: the body example is record ${JSON.stringify(shown?.id)}`)
      bodies++
    }
    const notFound = (operation.responses['404'] as { content?: Record<string, { example?: { instance?: string } }> } | undefined)?.content?.['application/problem+json']?.example
    if (notFound !== undefined && notFound.instance !== path.replace('{id}', String(id))) wrong.push(`${where}: the 404 example is at ${String(notFound.instance)}`)
  }
  t.same(wrong, [], 'every record operation\'s examples agree on the record')
  t.ok(bodies >= 10, `${bodies} record bodies checked`)
})

t.test('a record\'s examples are the first record\'s answers, as created', async t => {
  const created = await post(app, '/v1/projects', { name: 'Road repairs' })
  t.equal(created.statusCode, 201)
  t.equal(sent(created, 'Location'), example('/v1/projects', 'post', 201, 'Location'), 'Location: the first project')
  t.equal(sent(created, 'ETag'), example('/v1/projects', 'post', 201, 'ETag'), 'the 201\'s ETag: record 1, version 1, of this representation')
  const read = await app.inject({ method: 'GET', url: '/v1/projects/1' })
  t.equal(sent(read, 'ETag'), example('/v1/projects/{id}', 'get', 200, 'ETag'), 'a GET\'s ETag')
  t.equal(example('/v1/projects/{id}', 'get', 304, 'ETag'), example('/v1/projects/{id}', 'get', 200, 'ETag'), 'the 304 shows the same')
  t.match(sent(read, 'Last-Modified'), HTTP_DATE)
  t.match(example('/v1/projects/{id}', 'get', 200, 'Last-Modified'), HTTP_DATE, 'Last-Modified: an HTTP date')
  t.equal(sent(read, 'Cache-Control'), example('/v1/projects/{id}', 'get', 200, 'Cache-Control'))
  t.equal(sent(created, 'Cache-Control'), example('/v1/projects', 'post', 201, 'Cache-Control'))

  const minimal = await app.inject({ method: 'PATCH', url: '/v1/projects/1', headers: { 'content-type': 'application/json', prefer: 'return=minimal' }, payload: '{}' })
  t.equal(minimal.statusCode, 204)
  t.equal(sent(minimal, 'Preference-Applied'), example('/v1/projects/{id}', 'patch', 204, 'Preference-Applied'))
  t.match(example('/v1/projects/{id}', 'patch', 204, 'ETag'), STRONG_TAG)

  // A related create's Location is the created record's own path.
  const task = await post(app, '/v1/projects/1/tasks', { name: 'Fill the pothole' })
  t.equal(task.statusCode, 201)
  t.equal(sent(task, 'Location'), example('/v1/projects/{id}/tasks', 'post', 201, 'Location'), 'Location: the first task, at its own path')
  t.equal(sent(task, 'ETag'), example('/v1/projects/{id}/tasks', 'post', 201, 'ETag'), 'its ETag, of the tasks\' representation')
  t.not(example('/v1/projects/{id}/tasks', 'post', 201, 'ETag'), example('/v1/projects', 'post', 201, 'ETag'), 'each resource\'s tags have their own prefix')

  const replayed = await post(app, '/v1/projects', { name: 'Bridge' }, { 'idempotency-key': 'k-1' })
  const again = await post(app, '/v1/projects', { name: 'Bridge' }, { 'idempotency-key': 'k-1' })
  t.equal(replayed.statusCode, 201)
  t.equal(sent(again, 'Idempotent-Replayed'), example('/v1/projects', 'post', 201, 'Idempotent-Replayed'))
})

t.test('a list\'s examples are the answer to its second page of 95', async t => {
  const listing = await buildTestApp(t)
  for (let made = 1; made <= 95; made++) t.equal((await post(listing, '/v1/projects', { name: `Project ${made}` })).statusCode, 201)
  const page = await listing.inject({ method: 'GET', url: '/v1/projects?page=2' })
  t.equal(page.statusCode, 200)
  t.equal(sent(page, 'Link'), example('/v1/projects', 'get', 200, 'Link'), 'the page links')
  t.equal(sent(page, 'X-Total-Count'), example('/v1/projects', 'get', 200, 'X-Total-Count'), 'the total')
  t.match(sent(page, 'ETag'), /^W\/"[A-Za-z0-9_-]+\.95"$/)
  t.match(example('/v1/projects', 'get', 200, 'ETag'), /^W\/"[A-Za-z0-9_-]+\.95"$/, 'a weak tag that carries the total')
  t.match(example('/v1/projects/{id}/tasks', 'get', 200, 'Link'), /^<\/v1\/projects\/1\/tasks\?page=1>; rel="first", <\/v1\/projects\/1\/tasks\?page=1>; rel="prev", /, 'a related list\'s links, at its own path')

  const keys = await listing.inject({ method: 'GET', url: '/v1/api-keys?page=2' })
  t.equal(keys.statusCode, 200)
  t.match(example('/v1/api-keys', 'get', 200, 'Link'), /^<\/v1\/api-keys\?page=1>; rel="first", /, 'an admin list\'s links')
  t.match(example('/v1/api-keys', 'get', 200, 'ETag'), WEAK_TAG)
  t.match(example('/v1/api-keys/{id}', 'get', 200, 'ETag'), STRONG_TAG)
  t.match(example('/v1/api-keys', 'post', 201, 'Location'), /^\/v1\/api-keys\/\d+$/)
  t.match(example('/v1/webhooks/{id}/deliveries', 'get', 200, 'Link'), /^<\/v1\/webhooks\/1\/deliveries\?limit=100>; rel="first", <\/v1\/webhooks\/1\/deliveries\?limit=100&before=\d+>; rel="next"$/)
})

/** The wait the example 429's problem names. */
const example429Detail = (): string => document.paths['/v1/projects'].get.responses['429'].content['application/problem+json'].example.detail as string

t.test('the rate-limit examples are a credential\'s first answer at the default limit, and a refusal\'s', async t => {
  // The service's defaults, which the helper raises for other tests.
  const limited = await buildTestApp(t, { env: { RATE_LIMIT_MAX: String(Settings.properties.RATE_LIMIT_MAX.default), RATE_LIMIT_WINDOW: String(Settings.properties.RATE_LIMIT_WINDOW.default) } })
  const first = await limited.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: bearer({ sub: 'first-request', scope: 'admin' }) } })
  t.equal(first.statusCode, 200)
  for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit']) {
    t.equal(sent(first, name), example('/v1/projects', 'get', 200, name), name)
  }
  const token = await limited.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization: undefined, 'content-type': 'application/json' }, payload: '{"grant_type":"client_credentials"}' })
  t.equal(token.statusCode, 401)
  for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'RateLimit-Policy']) {
    t.equal(sent(token, name), example('/v1/auth/token', 'post', 401, name), `the token endpoint's own limit: ${name}`)
  }
  let refused = token
  for (let tries = 1; tries <= 20 && refused.statusCode !== 429; tries++) {
    refused = await limited.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization: undefined, 'content-type': 'application/json' }, payload: '{"grant_type":"client_credentials"}' })
  }
  t.equal(refused.statusCode, 429, 'the token endpoint refuses past its limit')
  const withoutWait = (detail: string): string => detail.replace(/retry after \d+ s/, 'retry after … s')
  const tokenProblem = document.paths['/v1/auth/token'].post.responses['429'].content['application/problem+json'].example
  t.equal(withoutWait(tokenProblem.detail), withoutWait(body(refused).detail), 'its 429 example names its own limit, as the real one does')
  t.equal(example('/v1/projects', 'get', 429, 'X-RateLimit-Remaining'), 0, 'a 429 has none left')
  t.equal(example('/v1/projects', 'get', 429, 'Retry-After'), Number(/retry after (\d+) s/.exec(example429Detail())![1]), 'and waits as its problem example says')
})

t.test('the examples of refusals are the refusals\' own headers', async t => {
  const anonymous = await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: undefined } })
  t.equal(anonymous.statusCode, 401)
  t.equal(sent(anonymous, 'WWW-Authenticate'), example('/v1/projects', 'get', 401, 'WWW-Authenticate'), 'a 401 without a credential')
  t.equal(sent(anonymous, 'Cache-Control'), example('/v1/projects', 'get', 401, 'Cache-Control'))
  t.match(sent(anonymous, 'X-Request-Id'), UUID)
  t.match(example('/v1/projects', 'get', 401, 'X-Request-Id'), UUID, 'X-Request-Id: a UUID, as one is made')

  const denied = await buildTestApp(t, { env: { AUTHZ_DENIED_STATUS: '403' } })
  const forbidden = await denied.inject({ method: 'DELETE', url: `/v1/tasks/${EXAMPLE_ID}`, headers: { authorization: bearer({ sub: 'reader', scope: 'tasks:read' }) } })
  t.equal(forbidden.statusCode, 403)
  t.equal(sent(forbidden, 'WWW-Authenticate'), example('/v1/tasks/{id}', 'delete', 403, 'WWW-Authenticate'), 'a 403 names the scope its operation needs')

  const client = await app.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization: undefined, 'content-type': 'application/json' }, payload: '{"grant_type":"client_credentials"}' })
  t.equal(client.statusCode, 401)
  t.equal(sent(client, 'WWW-Authenticate'), example('/v1/auth/token', 'post', 401, 'WWW-Authenticate'), 'the token endpoint\'s Basic challenge')

  const asText = await app.inject({ method: 'POST', url: '/v1/projects', headers: { 'content-type': 'text/plain' }, payload: 'x' })
  t.equal(asText.statusCode, 415)
  t.equal(sent(asText, 'Accept-Post'), example('/v1/projects', 'post', 415, 'Accept-Post'))
  const patchAsText = await app.inject({ method: 'PATCH', url: '/v1/projects/1', headers: { 'content-type': 'text/plain' }, payload: 'x' })
  t.equal(patchAsText.statusCode, 415)
  t.equal(sent(patchAsText, 'Accept-Patch'), example('/v1/projects/{id}', 'patch', 415, 'Accept-Patch'))
  const zstd = await app.inject({ method: 'POST', url: '/v1/projects', headers: { 'content-type': 'application/json', 'content-encoding': 'zstd' }, payload: '{}' })
  t.equal(zstd.statusCode, 415)
  t.equal(sent(zstd, 'Accept-Encoding'), example('/v1/projects', 'post', 415, 'Accept-Encoding'))
})

t.test('a 503\'s Retry-After example is the wait the database\'s absence asks for', async t => {
  const store = await openStore(buildModel(resources), await testStoreOptions(t))
  const unreachable = await buildTestApp(t, { store: { ...store, migrate: async () => await store.migrate(), close: async () => await store.close(), ping: async () => { throw new Error('connect ECONNREFUSED') } } })
  const down = await unreachable.inject({ method: 'GET', url: '/ready' })
  t.equal(down.statusCode, 503)
  t.equal(sent(down, 'Retry-After'), example('/ready', 'get', 503, 'Retry-After'))
  t.equal(example('/v1/projects', 'get', 503, 'Retry-After'), example('/ready', 'get', 503, 'Retry-After'), 'the same on every route')
})
