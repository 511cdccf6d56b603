// The example API's deprecated collection, labels: every answer on its paths says it is deprecated and
// when it goes, and the OpenAPI document marks and documents the same on each of its operations.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { belongsTo, defineResource, hasMany, type Deprecation } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, post } from '../helper.js'

const DEPRECATION = `@${Date.parse('2026-09-01T00:00:00Z') / 1000}`
const SUNSET = 'Wed, 30 Jun 2027 00:00:00 GMT'

t.test('every answer on the labels paths carries Deprecation and Sunset, errors included', async t => {
  const app = await buildTestApp(t)
  const created = await post(app, '/v1/labels', { name: 'urgent', color: '#d62728' })
  t.equal(created.statusCode, 201)
  const id = body(created).id as number
  const answers = {
    create: created,
    list: await app.inject({ method: 'GET', url: '/v1/labels' }),
    read: await app.inject({ method: 'GET', url: `/v1/labels/${id}` }),
    head: await app.inject({ method: 'HEAD', url: `/v1/labels/${id}` }),
    patch: await app.inject({ method: 'PATCH', url: `/v1/labels/${id}`, payload: { color: '#1f77b4' } }),
    missing: await app.inject({ method: 'GET', url: '/v1/labels/999' }),
    invalid: await app.inject({ method: 'PATCH', url: `/v1/labels/${id}`, payload: { color: 'red' } }),
    anonymous: await app.inject({ method: 'GET', url: '/v1/labels', headers: { authorization: undefined } }),
    refused: await app.inject({ method: 'GET', url: `/v1/labels/${id}`, headers: { accept: 'text/html' } }),
    notAllowed: await app.inject({ method: 'DELETE', url: '/v1/labels' }),
    options: await app.inject({ method: 'OPTIONS', url: `/v1/labels/${id}` }),
    remove: await app.inject({ method: 'DELETE', url: `/v1/labels/${id}` })
  }
  t.same(Object.values(answers).map(answer => answer.statusCode), [201, 200, 200, 200, 200, 404, 400, 401, 406, 405, 204, 204])
  assertProblem(t, answers.invalid, 400, 'validation')
  for (const [name, answer] of Object.entries(answers)) {
    t.equal(answer.headers.deprecation, DEPRECATION, `${name}: Deprecation`)
    t.equal(answer.headers.sunset, SUNSET, `${name}: Sunset`)
  }
  t.equal(answers.notAllowed.headers.allow, 'GET, HEAD, POST, OPTIONS')
  t.same(answers.list.headers.link, '</v1/labels?page=1>; rel="first", </v1/labels?page=1>; rel="last"', 'no deprecation link is declared, so the Link holds only pages')

  for (const current of [await app.inject({ method: 'GET', url: '/v1/projects' }), await app.inject({ method: 'DELETE', url: '/v1/projects' })]) {
    t.equal(current.headers.deprecation, undefined, 'a collection that is not deprecated says nothing')
    t.equal(current.headers.sunset, undefined)
  }
})

t.test('the OpenAPI document marks every labels operation deprecated and documents the headers', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const operations = Object.entries(document.paths as Record<string, Record<string, { deprecated?: boolean, responses: Record<string, { headers?: Record<string, { description: string }> }> }>>)
    .filter(([path]) => path.startsWith('/v1/labels'))
    .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ at: `${method} ${path}`, operation })))
  t.same(operations.map(({ at }) => at).sort(), ['delete /v1/labels/{id}', 'get /v1/labels', 'get /v1/labels/{id}', 'patch /v1/labels/{id}', 'post /v1/labels', 'put /v1/labels/{id}'])
  for (const { at, operation } of operations) {
    t.equal(operation.deprecated, true, `${at} is deprecated`)
    for (const [status, response] of Object.entries(operation.responses)) {
      t.match(response.headers?.Deprecation?.description, new RegExp(`^\`${DEPRECATION}\``), `${at} ${status} documents Deprecation`)
      t.match(response.headers?.Sunset?.description, new RegExp(`^\`${SUNSET}\``), `${at} ${status} documents Sunset`)
    }
  }
  t.equal(document.paths['/v1/projects'].get.deprecated, undefined, 'other operations are not')
})

t.test('a related collection is deprecated when its parent or its child is, and goes with the first to go', async t => {
  // shelves (current) hold books (deprecated); vaults (deprecated, sunset later) hold deeds (deprecated, sunset sooner).
  const shelves = defineResource({ collection: 'shelves', fields: Type.Object({ name: Type.String() }), relations: { books: hasMany('books', { foreignKey: 'shelfId' }) } })
  const books = defineResource({
    collection: 'books',
    fields: Type.Object({ name: Type.String(), shelfId: Type.Integer() }),
    relations: { shelf: belongsTo('shelves', { foreignKey: 'shelfId' }) },
    deprecated: { since: '2026-01-01T00:00:00Z', sunset: '2027-01-01T00:00:00Z', link: 'https://example.com/books-go' }
  })
  const vaults = defineResource({
    collection: 'vaults',
    fields: Type.Object({ name: Type.String() }),
    relations: { deeds: hasMany('deeds', { foreignKey: 'vaultId' }) },
    deprecated: { since: '2026-03-01T00:00:00Z', sunset: '2028-01-01T00:00:00Z' }
  })
  const deeds = defineResource({
    collection: 'deeds',
    fields: Type.Object({ name: Type.String(), vaultId: Type.Integer() }),
    relations: { vault: belongsTo('vaults', { foreignKey: 'vaultId' }) },
    deprecated: { since: '2026-06-01T00:00:00Z', sunset: '2027-06-01T00:00:00Z', link: 'https://example.com/deeds-go' }
  })
  const app = await buildTestApp(t, { definitions: [shelves, books, vaults, deeds] })
  const shelf = body(await post(app, '/v1/shelves', { name: 'top' })).id as number
  const vault = body(await post(app, '/v1/vaults', { name: 'old' })).id as number

  const shelfAnswer = await app.inject({ method: 'GET', url: `/v1/shelves/${shelf}` })
  t.equal(shelfAnswer.headers.deprecation, undefined, 'the current parent itself is not deprecated')
  const shelved = [await post(app, `/v1/shelves/${shelf}/books`, { name: 'a book' }), await app.inject({ method: 'GET', url: `/v1/shelves/${shelf}/books` })]
  t.same(shelved.map(answer => answer.statusCode), [201, 200])
  for (const answer of shelved) {
    t.equal(answer.headers.deprecation, `@${Date.parse('2026-01-01T00:00:00Z') / 1000}`, 'the child\'s deprecation on its related path')
    t.equal(answer.headers.sunset, 'Fri, 01 Jan 2027 00:00:00 GMT')
  }
  t.equal(shelved[1]!.headers.link, `</v1/shelves/${shelf}/books?page=1>; rel="first", </v1/shelves/${shelf}/books?page=1>; rel="last", <https://example.com/books-go>; rel="deprecation"`)

  t.equal((await app.inject({ method: 'GET', url: '/v1/books' })).headers.link, '</v1/books?page=1>; rel="first", </v1/books?page=1>; rel="last", <https://example.com/books-go>; rel="deprecation"', 'on its own paths, its link once')

  const vaulted = [await post(app, `/v1/vaults/${vault}/deeds`, { name: 'a deed' }), await app.inject({ method: 'GET', url: `/v1/vaults/${vault}/deeds` }), await app.inject({ method: 'DELETE', url: `/v1/vaults/${vault}/deeds` })]
  t.same(vaulted.map(answer => answer.statusCode), [201, 200, 405])
  for (const answer of vaulted) {
    t.equal(answer.headers.deprecation, `@${Date.parse('2026-03-01T00:00:00Z') / 1000}`, 'deprecated since the earlier of the two')
    t.equal(answer.headers.sunset, 'Tue, 01 Jun 2027 00:00:00 GMT', 'gone with the first of the two to go')
  }
  t.match(vaulted[1]!.headers.link, /, <https:\/\/example\.com\/deeds-go>; rel="deprecation"$/)

  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const related = document.paths['/v1/shelves/{id}/books']
  t.same([related.get.deprecated, related.post.deprecated], [true, true], 'OpenAPI marks the related operations of a deprecated child')
  t.match(related.get.responses['200'].headers.Sunset.description, /^`Fri, 01 Jan 2027 00:00:00 GMT`/)
  t.equal(document.paths['/v1/vaults/{id}/deeds'].get.responses['200'].headers.Sunset.description.startsWith('`Tue, 01 Jun 2027 00:00:00 GMT`'), true)
  t.equal(document.paths['/v1/shelves/{id}'].get.deprecated, undefined, 'the parent\'s own operations are not')
})

t.test('a deprecation is checked when the definition loads: RFC 3339 dates, sunset after since, a link a header can carry', async t => {
  const things = (deprecated: Deprecation) => () => defineResource({ collection: 'things', fields: Type.Object({ name: Type.String() }), deprecated })
  // Date.parse took '1' as the year 2001 and 'March 7' as some March 7th.
  t.throws(things({ since: '1' }), /deprecated\.since "1" must be an RFC 3339 date \(2027-06-30\) or date-time/)
  t.throws(things({ sunset: 'March 7' }), /deprecated\.sunset "March 7" must be an RFC 3339 date/)
  t.throws(things({ since: '2027-01-01', sunset: '2026-06-30' }), /deprecated\.sunset \(2026-06-30\) must come after deprecated\.since \(2027-01-01\)/)
  // A line break in the link made every answer of the resource a 500; a '>' ended the Link header's URI early.
  for (const link of ['https://example.com/a\r\nX-Evil: 1', 'https://example.com/a>b', 'see the wiki', 'ftp://example.com/x']) {
    t.throws(things({ link }), /deprecated\.link ".*" must be an http\(s\) URL or a path starting with \/, .*: it is sent in a Link header/, JSON.stringify(link))
  }
  for (const deprecated of [{ since: '2026-01-01T00:00:00+02:00', sunset: '2027-06-30', link: 'https://example.com/deprecations#things' }, { link: '/docs#things' }]) {
    t.doesNotThrow(things(deprecated), JSON.stringify(deprecated))
  }
})
