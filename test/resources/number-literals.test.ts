// A union of number literals (`Type.Union([Type.Literal(1), …])`, or `Type.Enum` of a TypeScript
// enum) is a closed set of numbers: validated as one enum, documented as one, stored in a column of
// numbers, and so filtered (by order too) and sorted as numbers, with counts kept per value.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, pointers, post, type Json } from '../helper.js'

enum Size { Small = 1, Large = 3 }

const alerts = defineResource({
  collection: 'alerts',
  fields: Type.Object({
    name: Type.String({ minLength: 1 }),
    level: Type.Union([Type.Literal(1), Type.Literal(5), Type.Literal(10)], { default: 5 }),
    ratio: Type.Optional(Type.Union([Type.Literal(0.5), Type.Literal(2)])),
    size: Type.Optional(Type.Enum(Size))
  }),
  filterable: ['level', 'ratio', 'size'],
  sortable: ['level', 'ratio']
})

t.test('a union of number literals is validated, stored and returned as numbers', async t => {
  const app = await buildTestApp(t, { definitions: [alerts] })
  const created = body(await post(app, '/v1/alerts', { name: 'disk', level: 10, ratio: 0.5, size: Size.Large }))
  t.match(created, { level: 10, ratio: 0.5, size: 3 })
  t.equal(body(await post(app, '/v1/alerts', { name: 'quiet' })).level, 5, 'the default')

  const refused = assertProblem(t, await app.inject({ method: 'POST', url: '/v1/alerts', payload: { name: 'x', level: 3, ratio: '2', size: 2 } }), 400, 'validation')
  t.same(pointers(refused), ['/level', '/ratio', '/size'])
  t.match(refused.errors[0].detail, /must be one of 1, 5, 10/)

  const id = created.id as number
  const patched = await app.inject({ method: 'PATCH', url: `/v1/alerts/${id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { level: null, ratio: null } })
  t.equal(patched.statusCode, 200)
  t.same([body(patched).level, 'ratio' in body(patched)], [5, false], 'null restores the default, removes the optional one')
})

t.test('filtered by equality, lists and order, sorted as numbers, counted', async t => {
  const app = await buildTestApp(t, { definitions: [alerts] })
  for (const [name, level, ratio] of [['a', 1, 2], ['b', 10, 0.5], ['c', 5, undefined], ['d', 10, 2], ['e', 1, undefined]] as const) {
    await post(app, '/v1/alerts', { name, level, ...(ratio === undefined ? {} : { ratio }) })
  }
  const names = async (query: string): Promise<{ names: string[], total: string | undefined }> => {
    const response = await app.inject({ method: 'GET', url: `/v1/alerts?${query}` })
    t.equal(response.statusCode, 200, query)
    return { names: (body(response) as unknown as Json[]).map(item => item.name as string), total: response.headers['x-total-count'] as string | undefined }
  }
  t.same(await names('level=10'), { names: ['b', 'd'], total: '2' })
  t.same(await names('level[in]=1,5'), { names: ['a', 'c', 'e'], total: '3' })
  t.same(await names('level[ne]=1'), { names: ['b', 'c', 'd'], total: '3' })
  t.same(await names('level[gte]=5&sort=-level,name'), { names: ['b', 'd', 'c'], total: '3' }, 'ordered as numbers: 10 after 5')
  t.same(await names('ratio[lt]=2'), { names: ['b'], total: '1' })
  t.same(await names('sort=ratio,-name'), { names: ['b', 'd', 'a', 'e', 'c'], total: '5' }, 'missing values last')

  for (const query of ['level=3', 'level[gt]=abc', 'level=1.5', 'ratio=1', 'size=2']) {
    t.same(pointers(assertProblem(t, await app.inject({ method: 'GET', url: `/v1/alerts?${query}` }), 400, 'validation')), [`/${query.split('=')[0]!}`], query)
  }
})

t.test('the document gives one enum of numbers, and the order operators', async t => {
  const app = await buildTestApp(t, { definitions: [alerts] })
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const { level, ratio, size } = document.components.schemas.Alert.properties
  t.same([level.type, level.enum], ['integer', [1, 5, 10]])
  t.same([ratio.type, ratio.enum], ['number', [0.5, 2]])
  t.same([size.type, size.enum], ['integer', [1, 3]])
  const parameters = document.paths['/v1/alerts'].get.parameters.map((parameter: Json) => parameter.name as string)
  t.ok(['level', 'level[in]', 'level[gte]', 'ratio[lt]'].every(name => parameters.includes(name)), 'a set of numbers is ordered')
})
