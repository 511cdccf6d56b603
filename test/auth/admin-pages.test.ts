/**
 * The admin collections (API keys, OAuth clients, webhook subscriptions) page
 * as every collection does, with `page` and `limit`, X-Total-Count and page
 * links; without either parameter they answer every live item, as they did
 * before they paged. Revoked items are in no page and no count.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertProblem, body, buildTestApp, post, type Json } from '../helper.js'

/** Each admin collection, and how to add an item to it. */
const COLLECTIONS = [
  { path: '/v1/api-keys', create: (n: number) => ({ name: `key ${n}`, scopes: ['projects:read'] }) },
  { path: '/v1/clients', create: (n: number) => ({ name: `client ${n}`, scopes: ['projects:read'] }) },
  { path: '/v1/webhooks', create: (n: number) => ({ url: `http://127.0.0.1:9/hook/${n}`, events: ['projects.created'] }) }
] as const

/** `count` new items of a collection, their ids in creation order. */
async function fill (app: FastifyInstance, collection: typeof COLLECTIONS[number], count: number): Promise<number[]> {
  const ids: number[] = []
  for (let n = 0; n < count; n++) {
    const created = await post(app, collection.path, collection.create(n))
    t.equal(created.statusCode, 201, `${collection.path} created`)
    ids.push((body(created) as { id: number }).id)
  }
  return ids
}

const idsOf = (response: { body: string }): number[] => (JSON.parse(response.body) as Array<{ id: number }>).map(item => item.id)

t.test('an admin list without page or limit answers every live item, with X-Total-Count', async t => {
  const app = await buildTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1' } })
  for (const collection of COLLECTIONS) {
    const before = idsOf(await app.inject({ method: 'GET', url: collection.path }))
    const added = await fill(app, collection, 23)
    const all = await app.inject({ method: 'GET', url: collection.path })
    t.equal(all.statusCode, 200, collection.path)
    t.same(idsOf(all), [...before, ...added], `${collection.path}: every item, in id order, more than a page's default 20`)
    t.equal(all.headers['x-total-count'], String(before.length + 23))
    t.equal(all.headers.link, undefined, 'no page links: there is one page')
  }
})

t.test('page and limit page an admin list, with its total and links; revoked items are in neither', async t => {
  const app = await buildTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1' } })
  for (const collection of COLLECTIONS) {
    const { path } = collection
    const existing = idsOf(await app.inject({ method: 'GET', url: path }))
    const added = await fill(app, collection, 9)
    // One revoked (a key, a client) or deleted (a subscription): gone from every page and from the count.
    const gone = added.splice(3, 1)[0]!
    t.equal((await app.inject({ method: 'DELETE', url: `${path}/${gone}` })).statusCode, 204)
    const live = [...existing, ...added]
    const total = String(live.length)
    const last = Math.ceil(live.length / 3)

    const first = await app.inject({ method: 'GET', url: `${path}?limit=3` })
    t.equal(first.statusCode, 200, path)
    t.same(idsOf(first), live.slice(0, 3), `${path}: the first 3`)
    t.equal(first.headers['x-total-count'], total)
    t.equal(first.headers.link, `<${path}?limit=3&page=1>; rel="first", <${path}?limit=3&page=2>; rel="next", <${path}?limit=3&page=${last}>; rel="last"`)

    const second = await app.inject({ method: 'GET', url: `${path}?page=2&limit=3` })
    t.same(idsOf(second), live.slice(3, 6), `${path}: the next 3, without the revoked one`)
    t.notOk(idsOf(second).includes(gone))
    t.equal(second.headers['x-total-count'], total)
    const at = (page: number, rel: string): string => `<${path}?page=${page}&limit=3>; rel="${rel}"`
    t.equal(second.headers.link, [at(1, 'first'), at(1, 'prev'), ...(last > 2 ? [at(3, 'next')] : []), at(last, 'last')].join(', '))

    const walked: number[] = []
    for (let page = 1; page <= last; page++) walked.push(...idsOf(await app.inject({ method: 'GET', url: `${path}?limit=3&page=${page}` })))
    t.same(walked, live, `${path}: the pages hold every live item once`)

    const beyond = await app.inject({ method: 'GET', url: `${path}?limit=3&page=${last + 5}` })
    t.equal(beyond.statusCode, 200, 'a page past the end')
    t.same(JSON.parse(beyond.body), [])
    t.equal(beyond.headers['x-total-count'], total)

    // `page` alone pages by the default limit of 20.
    const byPage = await app.inject({ method: 'GET', url: `${path}?page=1` })
    t.same(idsOf(byPage), live.slice(0, 20))
    t.match(byPage.headers.link, /rel="first"/)

    const head = await app.inject({ method: 'HEAD', url: `${path}?limit=3` })
    t.equal(head.statusCode, 200, 'HEAD too')
    t.equal(head.headers['x-total-count'], total)
    t.equal(head.headers.link, first.headers.link)
  }
})

t.test('a page\'s tag covers its total: a page 1 whose collection grew is sent again', async t => {
  const app = await buildTestApp(t)
  const collection = COLLECTIONS[1]
  await fill(app, collection, 4)
  const first = await app.inject({ method: 'GET', url: '/v1/clients?limit=2' })
  const tag = first.headers.etag as string
  t.match(tag, /^W\//)
  const held = await app.inject({ method: 'GET', url: '/v1/clients?limit=2', headers: { 'if-none-match': tag } })
  t.equal(held.statusCode, 304, 'unchanged: revalidated')
  t.equal(held.headers['x-total-count'], first.headers['x-total-count'], 'a 304 carries the total')
  t.equal(held.headers.link, first.headers.link, 'and the links')
  await fill(app, collection, 1)
  const grown = await app.inject({ method: 'GET', url: '/v1/clients?limit=2', headers: { 'if-none-match': tag } })
  t.equal(grown.statusCode, 200, 'the same two clients, but a new total: sent again')
  t.same(idsOf(grown), idsOf(first))
  t.equal(grown.headers['x-total-count'], String(Number(first.headers['x-total-count']) + 1))
  t.not(grown.headers.etag, tag)
})

t.test('bad paging parameters on an admin list are 400s naming each', async t => {
  const app = await buildTestApp(t)
  for (const path of COLLECTIONS.map(collection => collection.path)) {
    const cases: Array<[string, Json]> = [
      ['limit=0', [{ in: 'query', pointer: '/limit', detail: 'must be >= 1' }]],
      ['limit=101', [{ in: 'query', pointer: '/limit', detail: 'must be <= 100' }]],
      ['page=0&limit=abc', [{ in: 'query', pointer: '/page', detail: 'must be >= 1' }, { in: 'query', pointer: '/limit', detail: 'must be an integer written in plain digits, such as 12' }]],
      ['page=1.5', [{ in: 'query', pointer: '/page', detail: 'must be an integer written in plain digits, such as 12' }]],
      ['sort=name', [{ in: 'query', pointer: '/sort', detail: 'is not a known parameter; known: page, limit' }]]
    ]
    for (const [query, errors] of cases) {
      const problem = assertProblem(t, await app.inject({ method: 'GET', url: `${path}?${query}` }), 400, 'validation')
      t.same(problem.errors, errors, `${path}?${query}`)
    }
  }
})

t.test('MAX_PAGE_LIMIT bounds an admin page too', async t => {
  const app = await buildTestApp(t, { env: { MAX_PAGE_LIMIT: '5' } })
  const problem = assertProblem(t, await app.inject({ method: 'GET', url: '/v1/api-keys?limit=6' }), 400, 'validation')
  t.same(problem.errors, [{ in: 'query', pointer: '/limit', detail: 'must be <= 5' }])
  t.equal((await app.inject({ method: 'GET', url: '/v1/api-keys?limit=5' })).statusCode, 200)
})
