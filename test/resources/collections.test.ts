import BetterSqlite3 from 'better-sqlite3'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { resources } from '../../schemas/index.js'
import { defineResource } from '../../src/resources/define.js'
import { buildModel } from '../../src/resources/model.js'
import { DEFERRED_FROM_OFFSET } from '../../src/store/list-query.js'
import { openStore } from '../../src/store/open.js'
import { assertProblem, body, buildTestApp, pointers, post, testDatabaseFile, testStoreOptions, SQLITE_ONLY, type Json } from '../helper.js'

const PROJECTS: Json[] = [
  { name: 'road works', budget: 300, active: true },
  { name: 'Road signs', budget: 100, active: false },
  { name: 'bridge', active: true },
  { name: 'Zebra crossing', budget: 300, active: true },
  { name: 'ämter', budget: 50, active: false },
  { name: '100%_done', budget: 0, active: true },
  { name: 'Tunnel', active: true },
  { name: 'alley', budget: 300, active: false }
]

async function seed (t: Test): Promise<{ app: FastifyInstance, projects: Json[] }> {
  const app = await buildTestApp(t)
  const projects: Json[] = []
  for (const fields of PROJECTS) projects.push(body(await post(app, '/v1/projects', fields)))
  return { app, projects }
}

const get = async (app: FastifyInstance, url: string) => await app.inject({ method: 'GET', url })

/** Link header → { rel: target }. */
function links (header: string | string[] | number | undefined): Record<string, string> {
  const result: Record<string, string> = {}
  for (const part of String(header ?? '').split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>;\s*rel="([^"]+)"$/.exec(part.trim())
    if (match !== null) result[match[2]!] = match[1]!
  }
  return result
}

type Key = { field: string, desc: boolean }

/** The order the contract promises: missing values last either way, code-point strings, ties by id in the last key's direction. */
function expectedOrder (items: Json[], sort: string): number[] {
  let keys: Key[]
  if (sort === 'asc' || sort === 'desc') keys = [{ field: 'id', desc: sort === 'desc' }]
  else {
    keys = sort.split(',').map(token => {
      const [name, direction] = token.replace(/^-/, '').split(':')
      return { field: name!, desc: token.startsWith('-') || direction === 'desc' }
    })
    if (!keys.some(key => key.field === 'id')) keys.push({ field: 'id', desc: keys.at(-1)!.desc })
  }
  const compare = (a: Json, b: Json): number => {
    for (const { field, desc } of keys) {
      const x = a[field]
      const y = b[field]
      if (x === y) continue
      if (x === undefined) return 1
      if (y === undefined) return -1
      const order = x < y ? -1 : 1
      return desc ? -order : order
    }
    return 0
  }
  return [...items].sort(compare).map(item => item.id)
}

async function walkPages (app: FastifyInstance, first: string): Promise<number[]> {
  const ids: number[] = []
  let url: string | undefined = first
  for (let guard = 0; url !== undefined && guard < 100; guard++) {
    const response = await get(app, url)
    if (response.statusCode !== 200) throw new Error(`${url}: ${response.body}`)
    ids.push(...body(response).map((item: Json) => item.id))
    url = links(response.headers.link).next
  }
  return ids
}

t.test('page and limit: defaults, X-Total-Count, Link, past the end', async t => {
  const { app, projects } = await seed(t)
  const all = await get(app, '/v1/projects')
  t.equal(all.headers['x-total-count'], String(projects.length))
  t.equal(body(all).length, projects.length)

  const second = await get(app, '/v1/projects?limit=3&page=2&sort=name')
  t.same(body(second).map((item: Json) => item.id), expectedOrder(projects, 'name').slice(3, 6))
  t.equal(second.headers['x-total-count'], '8')
  t.same(links(second.headers.link), {
    first: '/v1/projects?limit=3&page=1&sort=name',
    prev: '/v1/projects?limit=3&page=1&sort=name',
    next: '/v1/projects?limit=3&page=3&sort=name',
    last: '/v1/projects?limit=3&page=3&sort=name'
  }, 'each link keeps the other parameters')

  const firstPage = links((await get(app, '/v1/projects?limit=3')).headers.link)
  t.same(Object.keys(firstPage).sort(), ['first', 'last', 'next'], 'no prev on the first page')
  t.equal(firstPage.next, '/v1/projects?limit=3&page=2')

  const past = await get(app, '/v1/projects?page=50&limit=3')
  t.equal(past.statusCode, 200)
  t.same(body(past), [])
  t.equal(past.headers['x-total-count'], '8')

  const empty = await get(app, '/v1/tasks')
  t.same(body(empty), [])
  t.equal(empty.headers['x-total-count'], '0')
  t.same(links(empty.headers.link), { first: '/v1/tasks?page=1', last: '/v1/tasks?page=1' })
})

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

t.test('sort: by id, by keys, ties by id, missing values last, code-point order', async t => {
  const { app, projects } = await seed(t)
  for (const sort of ['asc', 'desc', 'name', '-name', 'name:desc', 'budget', '-budget', 'budget:asc', 'budget,-name', '-budget,name', 'createdAt', '-createdAt', 'updatedAt', 'budget:desc,name:desc']) {
    const response = await get(app, `/v1/projects?sort=${encodeURIComponent(sort)}&limit=100`)
    t.equal(response.statusCode, 200, sort)
    t.same(body(response).map((item: Json) => item.id), expectedOrder(projects, sort), `sort=${sort}`)
  }
  const byBudget = body(await get(app, '/v1/projects?sort=-budget')).map((item: Json) => item.budget)
  t.same(byBudget.slice(-2), [undefined, undefined], 'missing budgets come last when descending too')
  const names = body(await get(app, '/v1/projects?sort=name')).map((item: Json) => item.name)
  t.same(names, ['100%_done', 'Road signs', 'Tunnel', 'Zebra crossing', 'alley', 'bridge', 'road works', 'ämter'], 'binary order: upper case before lower, ä last')

  const unknown = assertProblem(t, await get(app, '/v1/projects?sort=colour'), 400)
  t.same(pointers(unknown), ['/sort'])
  t.match(unknown.errors[0].detail, /sortable: id, name, createdAt, updatedAt, budget/)
  assertProblem(t, await get(app, '/v1/projects?sort=tags'), 400)
  assertProblem(t, await get(app, '/v1/projects?sort=-name:desc'), 400)
  assertProblem(t, await get(app, '/v1/projects?sort=name,,id'), 400)
  for (const [sort, key] of [['name,-name', 'name'], ['budget,name,budget:desc', 'budget'], ['-id,id', 'id']] as const) {
    const twice = assertProblem(t, await get(app, `/v1/projects?sort=${sort}`), 400, 'validation')
    t.same(twice.errors.map((error: Json) => [error.pointer, error.detail]), [['/sort', `sorts by "${key}" twice; give each key once`]], sort)
  }
})

t.test('named filters, ANDed, with values computed per request', async t => {
  const { app, projects } = await seed(t)
  const active = body(await get(app, '/v1/projects?filter=active&limit=100'))
  t.same(active.map((item: Json) => item.id), projects.filter(p => p.active).map(p => p.id))
  t.equal((await get(app, '/v1/projects?filter=active')).headers['x-total-count'], String(active.length))
  t.same(body(await get(app, '/v1/projects?filter=active,archived')), [], 'ANDed')

  const project = projects[0]!
  const today = new Date().toISOString().slice(0, 10)
  const tasks = [
    { name: 'late', dueDate: '2020-01-01' },
    { name: 'late but done', dueDate: '2020-01-01', status: 'done' },
    { name: 'due today', dueDate: today },
    { name: 'future', dueDate: '2999-01-01', status: 'doing' },
    { name: 'no date' }
  ]
  for (const task of tasks) await post(app, `/v1/projects/${project.id}/tasks`, task)
  const overdue = body(await get(app, '/v1/tasks?filter=overdue')).map((item: Json) => item.name)
  t.same(overdue, ['late'])
  const activeOverdue = body(await get(app, '/v1/tasks?filter=active,overdue')).map((item: Json) => item.name)
  t.same(activeOverdue, ['late'])
  t.same(body(await get(app, '/v1/tasks?filter=active&sort=name')).map((item: Json) => item.name), ['due today', 'future', 'late', 'no date'])

  const unknown = assertProblem(t, await get(app, '/v1/tasks?filter=urgent'), 400)
  t.same(unknown.errors, [{ in: 'query', pointer: '/filter', detail: 'unknown filter "urgent"; known: active, overdue' }])
})

t.test('field filters: every operator, values parsed by type', async t => {
  const { app, projects } = await seed(t)
  const ids = async (query: string): Promise<number[]> => {
    const response = await get(app, `/v1/projects?${query}&limit=100`)
    if (response.statusCode !== 200) throw new Error(`${query}: ${response.body}`)
    return body(response).map((item: Json) => item.id)
  }
  const where = (test: (p: Json) => boolean): number[] => projects.filter(test).map(p => p.id)
  t.same(await ids('budget=300'), where(p => p.budget === 300))
  t.same(await ids('budget[eq]=300'), where(p => p.budget === 300))
  t.same(await ids('budget[ne]=300'), where(p => p.budget !== 300), 'ne keeps records without a value')
  t.same(await ids('budget[lt]=100'), where(p => p.budget !== undefined && p.budget < 100))
  t.same(await ids('budget[lte]=100'), where(p => p.budget !== undefined && p.budget <= 100))
  t.same(await ids('budget[gt]=100'), where(p => p.budget !== undefined && p.budget > 100))
  t.same(await ids('budget[gte]=100'), where(p => p.budget !== undefined && p.budget >= 100))
  t.same(await ids('budget[gte]=0.5'), where(p => p.budget !== undefined && p.budget >= 0.5), 'decimals')
  t.same(await ids('budget[in]=0,50'), where(p => p.budget === 0 || p.budget === 50))
  t.same(await ids('budget[in]=0&budget[in]=50'), where(p => p.budget === 0 || p.budget === 50), 'repeated in')
  t.same(await ids('active=false'), where(p => !p.active))
  t.same(await ids('name=bridge'), where(p => p.name === 'bridge'))
  t.same(await ids('name[like]=road*'), where(p => /^road/i.test(p.name)), 'like is case-insensitive, * is the wildcard')
  t.same(await ids('name[like]=*S*'), where(p => /s/i.test(p.name)))
  t.same(await ids('name[like]=ÄMTER'), where(p => p.name === 'ämter'), 'case folding beyond ASCII')
  t.same(await ids('name[like]=100%25_*'), where(p => p.name.startsWith('100%_')), '% and _ are literal')
  t.same(await ids('name[like]=1%25%25*'), [], '% never acts as a wildcard')
  t.same(await ids('name[like]=_oad*'), [], '_ never acts as a wildcard')
  t.same(await ids('active=true&budget[gte]=100&sort=-name'), expectedOrder(projects.filter(p => p.active && p.budget >= 100), '-name'), 'filters combine with sort')
  t.same(await ids('filter=archived&budget=300'), where(p => !p.active && p.budget === 300), 'and with named filters')
  t.same(await ids('budget[gte]=1e2&budget[lt]=3.0E%2B2'), where(p => p.budget >= 100 && p.budget < 300), 'a number may be written as JSON writes one, exponent included')

  for (const [query, pointer] of [['budget=abc', '/budget'], ['budget[gt]=1e400', '/budget[gt]'], ['budget[gt]=0x10', '/budget[gt]'], ['budget[gt]=.5', '/budget[gt]'], ['active=yes', '/active'], ['active[lt]=true', '/active[lt]'], ['budget[in]=1,x', '/budget[in]/1'], ['budget[like]=1*', '/budget[like]'], ['description=x', '/description'], ['budget[between]=1', '/budget[between]']] as const) {
    const problem = assertProblem(t, await get(app, `/v1/projects?${query}`), 400)
    t.same(pointers(problem), [pointer], query)
  }
  const badNumbers = assertProblem(t, await get(app, '/v1/projects?budget[gt]=.5&budget[in]=1,1e400'), 400)
  t.same(badNumbers.errors, [
    { in: 'query', pointer: '/budget[gt]', detail: 'must be a number written as JSON writes one, such as 12, -0.5 or 1e-9' },
    { in: 'query', pointer: '/budget[in]/1', detail: 'must be a number within ±1.8e308' }
  ], 'a number query value says how a number is written, or that it is out of range')
  const badEnum = assertProblem(t, await get(app, '/v1/tasks?status=someday'), 400)
  t.match(badEnum.errors[0].detail, /"todo", "doing", "done"/)
  assertProblem(t, await get(app, '/v1/tasks?dueDate=2026-13-01'), 400)
  t.same(assertProblem(t, await get(app, '/v1/tasks?priority[in]=1,two'), 400).errors,
    [{ in: 'query', pointer: '/priority[in]/1', detail: 'must be an integer written in plain digits, such as 12' }], 'an item of a list is explained like a single value')
  t.equal((await get(app, '/v1/tasks?priority[in]=1,2&dueDate[lt]=2030-01-01&status[in]=todo,doing')).statusCode, 200)
})

t.test('like matches formatted text such as an email; a date or an instant is only compared', async t => {
  const contacts = defineResource({
    collection: 'contacts',
    fields: Type.Object({ name: Type.String(), email: Type.String({ format: 'email' }), met: Type.Optional(Type.String({ format: 'date' })) }),
    filterable: ['email', 'met']
  })
  const app = await buildTestApp(t, { definitions: [contacts] })
  for (const [name, email] of [['ann', 'ann@example.com'], ['bob', 'Bob@Example.COM'], ['cy', 'cy@example.org']]) await post(app, '/v1/contacts', { name, email, met: '2026-01-02' })
  const names = async (query: string): Promise<string[]> => (body(await app.inject({ method: 'GET', url: `/v1/contacts?${query}` })) as unknown as Json[]).map(item => item.name as string)
  t.same(await names('email[like]=*@example.com'), ['ann', 'bob'], 'case-insensitive, as for any text')
  t.same(await names('email=cy@example.org'), ['cy'])
  t.same(pointers(assertProblem(t, await app.inject({ method: 'GET', url: '/v1/contacts?email=cy' }), 400, 'validation')), ['/email'], 'an equality still takes only an email')
  t.same(pointers(assertProblem(t, await app.inject({ method: 'GET', url: '/v1/contacts?met[like]=2026*' }), 400, 'validation')), ['/met[like]'])
  const operators = body(await app.inject({ method: 'GET', url: '/openapi.json' })).paths['/v1/contacts'].get.parameters.map((parameter: Json) => parameter.name as string)
  t.ok(operators.includes('email[like]') && !operators.includes('met[like]'), 'the document lists the same operators')
})

t.test('sparse fieldsets keep id and links', async t => {
  const { app, projects } = await seed(t)
  const response = await get(app, '/v1/projects?fields=name,budget&limit=1')
  t.same(body(response), [{ id: projects[0]!.id, name: 'road works', budget: 300, links: projects[0]!.links }])
  t.same(Object.keys(body(await get(app, '/v1/projects?fields=id,links&limit=1'))[0]).sort(), ['id', 'links'])
  t.same(Object.keys(body(await get(app, '/v1/projects?fields=createdAt&limit=1'))[0]).sort(), ['createdAt', 'id', 'links'])
  const unknown = assertProblem(t, await get(app, '/v1/projects?fields=name,secret'), 400)
  t.same(pointers(unknown), ['/fields'])
  t.match(unknown.errors[0].detail, /"secret"/)
})

t.test('paging through everything, by page and by cursor, under every sort: each item exactly once, in order', async t => {
  const { app, projects } = await seed(t)
  for (const sort of ['asc', 'desc', 'name', '-name', 'budget', '-budget', 'budget,-name', 'createdAt', '-updatedAt', 'budget:desc,name:desc', '-createdAt,-name', 'createdAt,name', 'createdAt,-name']) {
    const expected = expectedOrder(projects, sort)
    const q = `sort=${encodeURIComponent(sort)}&limit=3`
    t.same(await walkPages(app, `/v1/projects?${q}`), expected, `pages, sort=${sort}`)
    t.same(await walkPages(app, `/v1/projects?${q}&cursor=`), expected, `cursor, sort=${sort}`)
  }
  t.same(await walkPages(app, '/v1/projects?filter=active&sort=-budget&limit=2&cursor='), expectedOrder(projects.filter(p => p.active), '-budget'), 'cursor with a filter')
})

t.test('a page deep in a collection (found by its sort keys, then read) holds what the order promises', async t => {
  const app = await buildTestApp(t)
  // Past DEFERRED_FROM_OFFSET, with ties and missing values on budget, and names (unique) in the reverse order of ids.
  const total = DEFERRED_FROM_OFFSET + 30
  const projects: Json[] = []
  for (let start = 0; start < total; start += 100) {
    const batch = Array.from({ length: Math.min(100, total - start) }, (_, i) => start + i)
    projects.push(...await Promise.all(batch.map(async i => body(await post(app, '/v1/projects', { name: `p${String(total - i).padStart(6, '0')}`, ...(i % 5 === 0 ? {} : { budget: i % 9 }) })))))
  }
  // For each length, the last page read plainly, the first found by its keys, and the one after it (the last, part full).
  const pages = [20, 100].flatMap(limit => {
    const first = Math.ceil(DEFERRED_FROM_OFFSET / limit) + 1
    return [first - 1, first, first + 1].map(page => ({ page, limit }))
  })
  for (const sort of ['asc', 'desc', 'name', '-budget', 'budget,-name', '-createdAt']) {
    const expected = expectedOrder(projects, sort)
    for (const { page, limit } of pages) {
      const response = await get(app, `/v1/projects?sort=${encodeURIComponent(sort)}&page=${page}&limit=${limit}`)
      t.equal(response.statusCode, 200)
      t.equal(response.headers['x-total-count'], String(total))
      t.same(body(response).map((item: Json) => item.id), expected.slice((page - 1) * limit, page * limit), `sort=${sort}, page ${page} of ${limit}`)
    }
  }
  t.same(body(await get(app, `/v1/projects?sort=name&page=${Math.ceil(total / 20) + 1}&limit=20`)), [], 'past the end, still []')
})

t.test('cursor: links, no total, tamper-evident, not with page', async t => {
  const { app } = await seed(t)
  const first = await get(app, '/v1/projects?limit=3&cursor=')
  t.equal(first.statusCode, 200)
  t.equal(first.headers['x-total-count'], undefined, 'no X-Total-Count with cursors')
  const rel = links(first.headers.link)
  t.equal(rel.first, '/v1/projects?limit=3&cursor=')
  t.match(rel.next, /^\/v1\/projects\?limit=3&cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
  const token = new URL(`http://x${rel.next!}`).searchParams.get('cursor')!

  t.equal((await get(app, `/v1/projects?limit=3&cursor=${token}`)).statusCode, 200, 'the cursor issued is accepted, and remembered')
  const [payload, signature] = token.split('.')
  const forged = Buffer.from(JSON.stringify({ s: 'id', v: [1] })).toString('base64url')
  for (const bad of [`${forged}.${signature!}`, `${payload!}.${signature!.slice(0, -2)}AA`, 'garbage', `${payload!}`, `${payload!}.${signature!}.x`]) {
    const problem = assertProblem(t, await get(app, `/v1/projects?limit=3&cursor=${encodeURIComponent(bad)}`), 400)
    t.same(pointers(problem), ['/cursor'])
  }
  const otherSort = assertProblem(t, await get(app, `/v1/projects?limit=3&sort=-name&cursor=${token}`), 400)
  t.match(otherSort.errors[0].detail, /sort=id/)
  const withPage = assertProblem(t, await get(app, '/v1/projects?cursor=&page=2'), 400)
  t.same(pointers(withPage), ['/cursor'])

  const last = await walkPages(app, '/v1/projects?limit=4&cursor=')
  t.equal(last.length, 8)
})

t.test('related collections speak the same query language', async t => {
  const { app, projects } = await seed(t)
  const [a, b] = projects as [Json, Json]
  for (const [priority, status] of [[1, 'todo'], [5, 'done'], [3, 'todo'], [2, 'doing']] as const) {
    await post(app, `/v1/projects/${a.id}/tasks`, { name: `a${priority}`, priority, status })
  }
  await post(app, `/v1/projects/${b.id}/tasks`, { name: 'b1', priority: 1 })
  const response = await get(app, `/v1/projects/${a.id}/tasks?filter=active&sort=-priority&limit=2`)
  t.same(body(response).map((item: Json) => item.name), ['a3', 'a2'])
  t.equal(response.headers['x-total-count'], '3')
  t.equal(links(response.headers.link).next, `/v1/projects/${a.id}/tasks?filter=active&sort=-priority&limit=2&page=2`)
  t.same(await walkPages(app, `/v1/projects/${a.id}/tasks?status[ne]=done&limit=1&cursor=`), body(await get(app, `/v1/projects/${a.id}/tasks?status[ne]=done`)).map((item: Json) => item.id))
  assertProblem(t, await get(app, `/v1/projects/${a.id}/tasks?budget=1`), 400)
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
    { method: 'GET', url: '/v1/api-keys?limit=5' }
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

t.test('indexes exist for unique, foreign-key and filterable fields and (ending in id) every sort key', { skip: SQLITE_ONLY }, async t => {
  const file = testDatabaseFile(t)
  const app = await buildTestApp(t)
  await app.ready()
  const db = new BetterSqlite3(file, { readonly: true })
  t.teardown(() => db.close())
  // Each index as its columns in order: a sortable field's index ends in id, the order of a page.
  const indexed = (table: string): string[] => (db.prepare(`select name from pragma_index_list('${table}')`).all() as Array<{ name: string }>)
    .map(({ name }) => (db.prepare(`select name from pragma_index_info('${name}') order by seqno`).all() as Array<{ name: string }>).map(column => column.name).join(','))
  // name, createdAt and updatedAt are sort keys of every resource; SQLite needs no DESC NULLS LAST copies (see sort-plans.test.ts).
  t.same(indexed('projects').sort(), ['active', 'budget,id', 'createdAt,id', 'name', 'name,id', 'updatedAt,id'])
  t.same(indexed('tasks').sort(), ['assignee', 'createdAt,id', 'dueDate,id', 'name,id', 'priority,id', 'projectId', 'status,id', 'updatedAt,id'])
  t.same(indexed('notes').sort(), ['createdAt,id', 'name,id', 'owner', 'updatedAt,id'])
})

t.test('X-Total-Count follows every write: this process\'s, and another process\'s on the same database', async t => {
  const { app, projects } = await seed(t)
  const total = async (url: string): Promise<string> => String((await get(app, url)).headers['x-total-count'])
  const activeBefore = Number(await total('/v1/projects?filter=active'))
  t.equal(await total('/v1/projects'), String(projects.length))
  t.equal(await total('/v1/projects'), String(projects.length), 'asked again, the same')

  await post(app, '/v1/projects', { name: 'one more', active: true })
  t.equal(await total('/v1/projects'), String(projects.length + 1), 'a write here is counted at once')
  t.equal(await total('/v1/projects?filter=active'), String(activeBefore + 1))
  await app.inject({ method: 'PATCH', url: `/v1/projects/${String(projects[0]!.id)}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { active: false } })
  t.equal(await total('/v1/projects?filter=active'), String(activeBefore), 'an update that leaves a filter is counted at once')

  // Another process stands in: a second store on the same database.
  const elsewhere = await openStore(buildModel(resources), await testStoreOptions(t))
  t.teardown(async () => { await elsewhere.close() })
  const project = buildModel(resources).get('projects')
  await elsewhere.insert(project, { name: 'from elsewhere', active: true, tags: [] })
  t.equal(await total('/v1/projects'), String(projects.length + 2), 'a write by another process is counted at once')
  t.equal(await total('/v1/projects?filter=active'), String(activeBefore + 1))
})
