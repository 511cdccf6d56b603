import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, createProject, pointers, post } from '../helper.js'
import { Shape } from '../support/shapes.js'

t.test('every offending property is named, not just the first', async t => {
  const app = await buildTestApp(t)
  const response = await post(app, '/v1/projects', { name: '', budget: -1, tags: 'nope', color: 'red', id: 4, createdAt: 'x', links: {} })
  const problem = assertProblem(t, response, 400, 'validation')
  t.same(pointers(problem), ['/budget', '/color', '/createdAt', '/id', '/links', '/name', '/tags'])
  for (const issue of problem.errors) {
    t.equal(issue.in, 'body')
    t.type(issue.detail, 'string')
  }
  const byPointer = Object.fromEntries(problem.errors.map((issue: { pointer: string, detail: string }) => [issue.pointer, issue.detail]))
  t.match(byPointer['/id'], /read-only/)
  t.match(byPointer['/color'], /not a known property/)
  t.match(byPointer['/budget'], />= 0/)
  t.equal(body(await app.inject({ method: 'GET', url: '/v1/projects' })).length, 0, 'nothing was created')
})

t.test('types are never coerced in a body', async t => {
  const app = await buildTestApp(t)
  const cases: Array<[string, unknown]> = [
    ['/budget', '5'],
    ['/active', 'true'],
    ['/active', 1],
    ['/name', 42],
    ['/tags', ['ok', 3]]
  ]
  for (const [pointer, value] of cases) {
    const field = pointer.split('/')[1]!
    const payload = { name: 'Coerce', [field]: value }
    const problem = assertProblem(t, await post(app, '/v1/projects', payload), 400)
    t.ok(pointers(problem).some(p => p.startsWith(pointer)), `${JSON.stringify(value)} for ${field} is refused`)
  }
})

t.test('bounds, enums and formats from the schema are enforced', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  const url = `/v1/projects/${project.id}/tasks`
  const bad = await post(app, url, { name: 'x'.repeat(201), status: 'someday', priority: 6, dueDate: '2026-13-45' })
  const problem = assertProblem(t, bad, 400)
  t.same(pointers(problem), ['/dueDate', '/name', '/priority', '/status'])
  const status = problem.errors.find((issue: { pointer: string }) => issue.pointer === '/status')
  t.match(status.detail, /"todo", "doing", "done"/, 'the allowed values are listed')

  const fractional = assertProblem(t, await post(app, url, { name: 'x', priority: 2.5 }), 400)
  t.same(pointers(fractional), ['/priority'])

  const tooMany = assertProblem(t, await post(app, '/v1/projects', { name: 'Tags', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }), 400)
  t.same(pointers(tooMany), ['/tags'])

  const good = await post(app, url, { name: 'ok', status: 'doing', priority: 5, dueDate: '2026-02-28' })
  t.equal(good.statusCode, 201)
})

t.test('a body that is not an object, or is missing, is 400', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  const writes = [['POST', '/v1/projects'], ['PUT', `/v1/projects/${project.id as number}`], ['PATCH', `/v1/projects/${project.id as number}`], ['POST', `/v1/projects/${project.id as number}/tasks`]] as const
  for (const [method, url] of writes) {
    for (const payload of ['[]', '"text"', '42', 'null']) {
      const response = await app.inject({ method, url, payload, headers: { 'content-type': 'application/json' } })
      assertProblem(t, response, 400, 'validation')
    }
  }
  const none = await app.inject({ method: 'POST', url: '/v1/projects' })
  assertProblem(t, none, 400)
})

t.test('malformed ids are 400 in the path; well-formed unknown ids are 404', async t => {
  const app = await buildTestApp(t)
  for (const id of ['abc', '0', '-1', '1.5', '1e3', '0x10', '01', '+1', '9007199254740992', '99999999999999999999', '%20']) {
    const response = await app.inject({ method: 'GET', url: `/v1/projects/${id}` })
    const problem = assertProblem(t, response, 400, 'validation')
    t.same(problem.errors, [{ in: 'path', pointer: '/id', detail: problem.errors[0].detail }], `id ${id}`)
  }
  // Each detail says what is wrong with that id, not "must be integer" of an integer.
  const detailOf = async (id: string): Promise<string> => assertProblem(t, await app.inject({ method: 'GET', url: `/v1/projects/${id}` }), 400).errors[0].detail
  t.equal(await detailOf('abc'), 'must be an integer written in plain digits, such as 12')
  t.equal(await detailOf('0'), 'must be >= 1')
  t.equal(await detailOf('-1'), 'must be >= 1')
  t.equal(await detailOf('9007199254740992'), 'must be <= 9007199254740991', 'past 2^53-1 names the bound')
  t.equal(await detailOf('-99999999999999999999'), 'must be >= 1')
  for (const id of ['01', '%2B1', '007']) t.equal(await detailOf(id), 'must be an integer written in plain digits, without "+" or leading zeros', id)
  for (const id of ['1', '9007199254740991']) {
    assertProblem(t, await app.inject({ method: 'GET', url: `/v1/projects/${id}` }), 404, 'not-found')
  }
  assertProblem(t, await app.inject({ method: 'DELETE', url: '/v1/projects/abc' }), 400)
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects/abc/tasks' }), 400)
})

t.test('unknown query parameters are 400 naming them and what would work', async t => {
  const app = await buildTestApp(t)
  const issuesOf = async (url: string): Promise<unknown> => assertProblem(t, await app.inject({ method: 'GET', url }), 400, 'validation').errors
  t.same(await issuesOf('/v1/projects?colour=red'), [{ in: 'query', pointer: '/colour', detail: 'is not a known parameter; known: page, limit, sort, filter, fields, cursor; filterable fields: active, name, budget (also as field[op])' }])
  t.same(await issuesOf('/v1/tasks?name%5Blike%5D=road*'), [{ in: 'query', pointer: '/name[like]', detail: 'is not a filter: name cannot be filtered; filterable fields: status, priority, assignee, projectId, dueDate' }], 'a field the collection does not filter by')
  t.same(await issuesOf('/v1/tasks?priority%5Bbetween%5D=1'), [{ in: 'query', pointer: '/priority[between]', detail: 'is not a filter: priority has no operator "between"; use one of eq, ne, lt, lte, gt, gte, in' }], 'an operator the field does not have')
  t.same(await issuesOf('/v1/tasks?status%5Blike%5D=to*'), [{ in: 'query', pointer: '/status[like]', detail: 'is not a filter: status has no operator "like"; use one of eq, ne, in' }], 'operators differ by the field\'s type')
  t.same(await issuesOf('/v1/webhooks/1/deliveries?limt=5'), [{ in: 'query', pointer: '/limt', detail: 'is not a known parameter; known: limit, before' }], 'a route without filters lists its parameters')
  t.same(await issuesOf('/v1/projects/1?fields=name'), [{ in: 'query', pointer: '/fields', detail: 'is not a parameter of this route, which takes none' }])
  t.same(await issuesOf('/v1/projects?page=007&colour=red'), [
    { in: 'query', pointer: '/colour', detail: 'is not a known parameter; known: page, limit, sort, filter, fields, cursor; filterable fields: active, name, budget (also as field[op])' },
    { in: 'query', pointer: '/page', detail: 'must be an integer written in plain digits, without "+" or leading zeros' }
  ], 'every fault, each in its own words')
  t.same(await issuesOf('/v1/projects?page=99999999999999999999'), [{ in: 'query', pointer: '/page', detail: 'must be <= 100000000' }], 'too large a page names its bound')
})

t.test('strings a database cannot hold exactly are refused, not altered', async t => {
  const app = await buildTestApp(t)
  const nul = await app.inject({ method: 'POST', url: '/v1/projects', payload: '{"name":"a\\u0000b"}', headers: { 'content-type': 'application/json' } })
  t.same(pointers(assertProblem(t, nul, 400)), ['/name'])
  const lone = await app.inject({ method: 'POST', url: '/v1/projects', payload: '{"name":"a\\ud800b"}', headers: { 'content-type': 'application/json' } })
  t.same(pointers(assertProblem(t, lone, 400)), ['/name'])
  const several = await app.inject({ method: 'POST', url: '/v1/projects', payload: '{"name":"a\\u0000b","tags":["ok","\\udc00"]}', headers: { 'content-type': 'application/json' } })
  t.same(pointers(assertProblem(t, several, 400)), ['/name', '/tags/1'], 'every such string is named, not the first only')
  const pair = await app.inject({ method: 'POST', url: '/v1/projects', payload: '{"name":"smile \\ud83d\\ude00"}', headers: { 'content-type': 'application/json' } })
  t.equal(pair.statusCode, 201, 'a proper surrogate pair is fine')
  t.equal(body(pair).name, 'smile 😀')
  const unicode = await post(app, '/v1/projects', { name: 'Ünïcødé ✓ 中文' })
  t.equal(body(unicode).name, 'Ünïcødé ✓ 中文', 'stored exactly')
})

t.test('integers JavaScript cannot hold exactly are refused, not rounded', async t => {
  const counter = defineResource({
    collection: 'counters',
    fields: Type.Object({ name: Type.String(), count: Type.Optional(Type.Integer()), steps: Type.Optional(Type.Array(Type.Integer())), floor: Type.Optional(Type.Integer({ exclusiveMinimum: 0 })) })
  })
  const app = await buildTestApp(t, { definitions: [counter] })
  // 2^53 + 1 arrives from JSON.parse as 2^53: without a bound it would be stored one less than sent.
  const beyond = await app.inject({ method: 'POST', url: '/v1/counters', payload: '{"name":"a","count":9007199254740993,"steps":[1,-9007199254740993]}', headers: { 'content-type': 'application/json' } })
  const problem = assertProblem(t, beyond, 400, 'validation')
  t.same(problem.errors, [
    { in: 'body', pointer: '/count', detail: 'must be <= 9007199254740991' },
    { in: 'body', pointer: '/steps/1', detail: 'must be >= -9007199254740991' }
  ])
  const edge = await post(app, '/v1/counters', { name: 'b', count: Number.MAX_SAFE_INTEGER, steps: [Number.MIN_SAFE_INTEGER], floor: 1 })
  t.equal(edge.statusCode, 201)
  t.same([body(edge).count, body(edge).steps], [Number.MAX_SAFE_INTEGER, [Number.MIN_SAFE_INTEGER]], 'the largest safe integers are kept exactly')
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const count = document.components.schemas.Counter.properties.count
  t.same([count.minimum, count.maximum], [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], 'the bounds are documented')
  t.same(document.components.schemas.Counter.properties.floor, { type: 'integer', exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER }, 'a bound the definition gives is kept')
})

t.test('multipleOf is decided on the decimals as written: 19.99 is a multiple of 0.01', async t => {
  const prices = defineResource({
    collection: 'prices',
    fields: Type.Object({
      name: Type.String(),
      amount: Type.Number({ multipleOf: 0.01, default: 9.99 }),
      pack: Type.Optional(Type.Integer({ multipleOf: 5 })),
      halves: Type.Optional(Type.Array(Type.Number({ multipleOf: 0.5 })))
    }),
    example: { name: 'tea', amount: 4.1 }
  })
  const app = await buildTestApp(t, { definitions: [prices] })
  // In doubles 0.3 / 0.01 is 29.999999999999996 and 19.99 % 0.01 is not 0: Ajv's own check refused these.
  for (const amount of [0.3, 0.07, 19.99, 4.35, 12345678.91, -0.29, 1e21, 0]) {
    const created = await post(app, '/v1/prices', { name: 'x', amount })
    t.equal(created.statusCode, 201, `${amount} is a multiple of 0.01`)
    t.equal(body(created).amount, amount, 'and stored as sent')
  }
  t.equal(body(await post(app, '/v1/prices', { name: 'x' })).amount, 9.99, 'a default such as 9.99 loads and applies')
  const refused = assertProblem(t, await post(app, '/v1/prices', { name: 'x', amount: 1.005, pack: 7, halves: [1.5, 0.25] }), 400, 'validation')
  t.same(refused.errors, [
    { in: 'body', pointer: '/amount', detail: 'must be multiple of 0.01' },
    { in: 'body', pointer: '/pack', detail: 'must be multiple of 5' },
    { in: 'body', pointer: '/halves/1', detail: 'must be multiple of 0.5' }
  ])
  for (const amount of [0.001, 5e-324, 1.0000000000000002]) {
    t.same(pointers(assertProblem(t, await post(app, '/v1/prices', { name: 'x', amount }), 400, 'validation')), ['/amount'], `${amount} is not`)
  }
  const created = body(await post(app, '/v1/prices', { name: 'y', amount: 1 }))
  const patched = await app.inject({ method: 'PATCH', url: `/v1/prices/${created.id as number}`, payload: { amount: 0.1 }, headers: { 'content-type': 'application/merge-patch+json' } })
  t.equal(body(patched).amount, 0.1, 'a merge patch is checked the same way')
  await t.rejects(buildTestApp(t, { definitions: [defineResource({ collection: 'prices', fields: Type.Object({ name: Type.String(), amount: Type.Number({ multipleOf: 0.01, default: 1.005 }) }) })] }),
    /the default of field "amount" is refused by its own schema: \/amount must be multiple of 0.01/, 'a default that is no multiple is still refused at load')
})

t.test('a number beyond a double, which JSON.parse reads as Infinity, is refused saying so', async t => {
  const app = await buildTestApp(t)
  const huge = await app.inject({ method: 'POST', url: '/v1/projects', payload: '{"name":"a","budget":1e309}', headers: { 'content-type': 'application/json' } })
  t.same(assertProblem(t, huge, 400, 'validation').errors, [{ in: 'body', pointer: '/budget', detail: 'must be number, not a number beyond ±1.8e308' }])
})

t.test('a wrong type names what was sent, so null on a required field and "2" for 2 explain themselves', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app, { name: 'typed' })
  const issuesOf = async (method: 'POST' | 'PATCH', url: string, payload: unknown): Promise<unknown> => {
    const response = await app.inject({ method, url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })
    return assertProblem(t, response, 400, 'validation').errors
  }
  t.same(await issuesOf('PATCH', `/v1/projects/${project.id}`, { name: null }), [{ in: 'body', pointer: '/name', detail: 'must be string, not null' }], 'null cannot remove a required field')
  t.same(await issuesOf('POST', '/v1/projects', { name: 'x', budget: '5', active: 'true', tags: 'a' }), [
    { in: 'body', pointer: '/active', detail: 'must be boolean, not string' },
    { in: 'body', pointer: '/budget', detail: 'must be number, not string' },
    { in: 'body', pointer: '/tags', detail: 'must be array, not string' }
  ], 'nothing is coerced, and each says why')
  t.same(await issuesOf('POST', '/v1/tasks', { name: 'x', projectId: project.id, status: 3, priority: 2.5 }), [
    { in: 'body', pointer: '/status', detail: 'must be one of "todo", "doing", "done", not integer' },
    { in: 'body', pointer: '/priority', detail: 'must be integer, not number' }
  ], 'an enum given a number is one issue, not two')
  t.same(await issuesOf('POST', '/v1/tasks', { name: 'x', projectId: project.id, status: 'later' }), [
    { in: 'body', pointer: '/status', detail: 'must be one of "todo", "doing", "done"' }
  ], 'a string outside the enum is not called the wrong type')
  t.same(await issuesOf('PATCH', `/v1/projects/${project.id}`, { budget: '5', description: 7 }), [
    { in: 'body', pointer: '/description', detail: 'must be string or null, not integer' },
    { in: 'body', pointer: '/budget', detail: 'must be number or null, not string' }
  ], 'a merge patch field that null may remove')
  const tasks = await app.inject({ method: 'GET', url: '/v1/tasks?status=later&priority=high' })
  t.same(assertProblem(t, tasks, 400, 'validation').errors, [
    { in: 'query', pointer: '/status', detail: 'must be one of "todo", "doing", "done"' },
    { in: 'query', pointer: '/priority', detail: 'must be an integer written in plain digits, such as 12' }
  ], 'a query value is always text: its type is not named, how to write one is')
  const written = await app.inject({ method: 'GET', url: '/v1/tasks?dueDate[lt]=2026-02-30' })
  t.same(assertProblem(t, written, 400, 'validation').errors, [
    { in: 'query', pointer: '/dueDate[lt]', detail: 'must be a calendar date written YYYY-MM-DD, such as 2026-01-31' }
  ])
  const projects = await app.inject({ method: 'GET', url: '/v1/projects?active=yes' })
  t.same(assertProblem(t, projects, 400, 'validation').errors, [{ in: 'query', pointer: '/active', detail: 'must be true or false' }])
})

t.test('a union of object variants: the faults of the variant the value names, not of every variant', async t => {
  const drawings = defineResource({
    collection: 'drawings',
    fields: Type.Object({
      name: Type.String(),
      shape: Type.Optional(Shape)
    })
  })
  const app = await buildTestApp(t, { definitions: [drawings] })
  const errors = async (shape: unknown) => assertProblem(t, await post(app, '/v1/drawings', { name: 'a', shape }), 400, 'validation').errors
  t.same(await errors({ kind: 'square', side: 'x' }), [{ in: 'body', pointer: '/shape/side', detail: 'must be number, not string' }], 'a square with a bad side, not also a circle without r')
  t.same(await errors({ kind: 'circle', r: 1, side: 2 }), [{ in: 'body', pointer: '/shape/side', detail: 'is not a known property' }])
  t.same(await errors(5), [{ in: 'body', pointer: '/shape', detail: 'must be object, not integer' }])
  t.same(await errors({ kind: 'triangle' }), [
    { in: 'body', pointer: '/shape/r', detail: 'is required' },
    { in: 'body', pointer: '/shape/kind', detail: 'must be one of "circle", "square"' },
    { in: 'body', pointer: '/shape/side', detail: 'is required' },
    { in: 'body', pointer: '/shape', detail: 'does not match any allowed form' }
  ], 'a tag no variant has: every variant\'s needs, each said once')
})
