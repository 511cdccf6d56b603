// A list's query refused: every bad, repeated, unknown or hostile parameter is named in one 400, and none reaches SQL as text.
import t from 'tap'
import { assertProblem, body, buildTestApp, pointers, post, type Json } from '../helper.js'
import { get, PROJECTS, seed } from './list-support.js'

t.test('page and limit out of range are 400 naming the parameter and bound', async t => {
  const app = await buildTestApp(t, { env: { MAX_PAGE_LIMIT: '50' } })
  for (const [query, pointer, detail] of [
    ['limit=0', '/limit', /1/], ['limit=51', '/limit', /50/], ['limit=abc', '/limit', /integer/], ['limit=1.5', '/limit', /integer/],
    ['page=0', '/page', /1/], ['page=-2', '/page', /1/], ['page=1e2', '/page', /integer/]
  ] as const) {
    const problem = assertProblem(t, await get(app, `/v1/projects?${query}`), 400, 'validation')
    t.equal(problem.errors[0].in, 'query')
    t.equal(problem.errors[0].pointer, pointer)
    t.match(problem.errors[0].detail, detail, query)
  }
  t.equal((await get(app, '/v1/projects?limit=50')).statusCode, 200)
})

t.test('a one-value parameter given twice is 400 saying so, beside any other fault', async t => {
  const app = await buildTestApp(t)
  const twice = assertProblem(t, await get(app, '/v1/projects?page=1&page=2'), 400, 'validation')
  t.same(twice.errors, [{ in: 'query', pointer: '/page', detail: 'is given 2 times; give it once' }])
  const both = assertProblem(t, await get(app, '/v1/tasks?sort=name&sort=id&sort=-id&limit=0'), 400, 'validation')
  t.same(both.errors, [
    { in: 'query', pointer: '/sort', detail: 'is given 3 times; give it once' },
    { in: 'query', pointer: '/limit', detail: 'must be >= 1' }
  ])
  t.equal((await get(app, '/v1/projects?budget[in]=0&budget[in]=50')).statusCode, 200, 'a list parameter may still repeat')
})

t.test('unknown query parameters are 400 naming each', async t => {
  const app = await buildTestApp(t)
  const problem = assertProblem(t, await get(app, '/v1/projects?colour=red&pge=2'), 400)
  t.same(pointers(problem), ['/colour', '/pge'])
})

t.test('one 400 names every bad parameter: those the schema refuses and the sort, filter, fields and cursor it cannot check', async t => {
  const app = await buildTestApp(t)
  const all = assertProblem(t, await get(app, '/v1/tasks?limit=0&colour=red&status=lost&sort=bogus&filter=nope&fields=name,qq&cursor=forged'), 400, 'validation')
  t.same(pointers(all), ['/colour', '/cursor', '/fields', '/filter', '/limit', '/sort', '/status'])
  t.equal(all.detail, '7 values in the query are invalid')
  t.same(all.errors.find((issue: Json) => issue.pointer === '/filter'), { in: 'query', pointer: '/filter', detail: 'unknown filter "nope"; known: active, overdue' })

  const project = body(await post(app, '/v1/projects', { name: 'Parent' }))
  const related = assertProblem(t, await get(app, `/v1/projects/${project.id}/tasks?page=0&sort=-bogus`), 400, 'validation')
  t.same(pointers(related), ['/page', '/sort'], 'a related collection names them all too')
  const orphan = assertProblem(t, await get(app, '/v1/projects/999/tasks?page=0&sort=-bogus'), 400, 'validation')
  t.same(pointers(orphan), ['/page', '/sort'], 'the query is refused before the parent is looked up')
  assertProblem(t, await get(app, '/v1/projects/abc/tasks?page=0'), 400)

  const head = await app.inject({ method: 'HEAD', url: '/v1/tasks?limit=0&sort=bogus' })
  t.equal(head.statusCode, 400, 'HEAD refuses it as GET does')
  t.equal((await get(app, '/v1/tasks?limit=5&sort=-priority&filter=active&fields=name')).statusCode, 200)
})

t.test('a route that declares no query parameters refuses any, naming it, before doing anything', async t => {
  const app = await buildTestApp(t)
  const project = body(await post(app, '/v1/projects', { name: 'queried' }))
  const json = { 'content-type': 'application/json' }
  const requests = [
    { method: 'GET', url: `/v1/projects/${project.id}?fields=name` },
    { method: 'HEAD', url: `/v1/projects/${project.id}?x=1` },
    { method: 'PATCH', url: `/v1/projects/${project.id}?dryRun=true`, headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"budget":5}' },
    { method: 'PUT', url: `/v1/projects/${project.id}?x=1`, headers: json, payload: '{"name":"replaced"}' },
    { method: 'DELETE', url: `/v1/projects/${project.id}?force=1` },
    { method: 'POST', url: '/v1/projects?x=1', headers: json, payload: '{"name":"created"}' },
    { method: 'GET', url: '/v1/api-keys/1?limit=5' }
  ] as const
  for (const request of requests) {
    const response = await app.inject(request)
    if (request.method === 'HEAD') {
      t.equal(response.statusCode, 400, 'HEAD too')
      continue
    }
    const problem = assertProblem(t, response, 400, 'validation')
    t.same(problem.errors, [{ in: 'query', pointer: `/${new URLSearchParams(request.url.split('?')[1]).keys().next().value!}`, detail: 'is not a parameter of this route, which takes none' }], `${request.method} ${request.url}`)
  }
  t.same(body(await get(app, `/v1/projects/${project.id}`)), project, 'nothing was changed or deleted')
  t.same(body(await get(app, '/v1/projects?name=created')), [], 'nothing was created')
})

t.test('hostile values get 400 or correct results, never a 500, and reach SQL only as values', async t => {
  const { app } = await seed(t)
  const hostile = [
    "name=x' OR '1'='1", 'name=x%22%3B DROP TABLE projects%3B --', 'sort=name%3B DROP TABLE projects', 'sort=(select 1)',
    'filter=active%3B DROP TABLE projects', 'fields=name%2C(select 1)', '__proto__=1', 'constructor[prototype]=1', 'name[__proto__]=1',
    `name=${'x'.repeat(5000)}`, 'name=%F0%9F%98%80%E4%B8%AD', 'name=%00', 'name[like]=%00*', 'name=%ED%A0%80', 'limit=10&limit=20',
    'sort=name&sort=-name', 'budget[in]=' + Array.from({ length: 101 }, (_, i) => i).join(','), 'name[like]=' + '*'.repeat(500),
    "budget[gt]=1' or 1=1", 'page=9007199254740993', 'cursor=' + 'A'.repeat(3000)
  ]
  for (const query of hostile) {
    const response = await get(app, `/v1/projects?${query}`)
    t.ok([200, 400, 414].includes(response.statusCode), `${query.slice(0, 60)} → ${response.statusCode}`)
    if (response.statusCode === 200) t.ok(Array.isArray(body(response)))
  }
  t.same(body(await get(app, "/v1/projects?name=x' OR '1'='1")), [], 'a quote is just a character')
  t.equal(body(await get(app, '/v1/projects?limit=100')).length, PROJECTS.length, 'the table is intact')
})
