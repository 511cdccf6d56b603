// The query language of a list: sort, named and field filters, like, sparse fieldsets, on related collections too, and the indexes behind them.
import BetterSqlite3 from 'better-sqlite3'
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, pointers, post, testDatabaseFile, SQLITE_ONLY, type Json } from '../helper.js'
import { expectedOrder, get, links, seed, walkPages } from './list-support.js'

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

t.test('an equality with a value outside the field\'s bounds is 400 naming the bound; an order comparison takes any value of the type', async t => {
  const { app, projects } = await seed(t)
  const outside = assertProblem(t, await get(app, '/v1/tasks?priority=33&priority[ne]=6&priority[in]=2,0&assignee='), 400, 'validation')
  t.same([...outside.errors].sort((a: Json, b: Json) => a.pointer.localeCompare(b.pointer)), [
    { in: 'query', pointer: '/assignee', detail: 'must NOT have fewer than 1 characters' },
    { in: 'query', pointer: '/priority', detail: 'must be <= 5' },
    { in: 'query', pointer: '/priority[in]/1', detail: 'must be >= 1' },
    { in: 'query', pointer: '/priority[ne]', detail: 'must be <= 5' }
  ], 'a value no record can hold would match nothing (or, by ne, everything): a typo, named')
  t.same(pointers(assertProblem(t, await get(app, '/v1/projects?budget=-1'), 400, 'validation')), ['/budget'])
  t.same(pointers(assertProblem(t, await get(app, `/v1/projects?name=${'n'.repeat(201)}`), 400, 'validation')), ['/name'])

  const ids = async (query: string): Promise<number[]> => body(await get(app, `/v1/projects?${query}&limit=100`)).map((item: Json) => item.id)
  t.same(await ids('budget[gte]=-1'), projects.filter(p => p.budget !== undefined).map(p => p.id), 'gte below the minimum: every record with a value')
  t.same(await ids(`name[lt]=${'z'.repeat(201)}`), projects.filter(p => p.name < 'z'.repeat(201)).map(p => p.id), 'lt past the longest name')
  const tasks = await get(app, '/v1/tasks?priority[lt]=10&priority[gte]=0')
  t.equal(tasks.statusCode, 200, 'an order comparison beyond the bounds is a fair question')
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
