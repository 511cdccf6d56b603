// Date-time fields hold instants: one spelling in storage (UTC, milliseconds, Z), so that filters and
// sorts compare instants, not text; a value that spelling cannot hold exactly is refused, not changed.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, post, type Json } from '../helper.js'

const events = defineResource({
  collection: 'events',
  fields: Type.Object({
    name: Type.String(),
    startsAt: Type.String({ format: 'date-time' }),
    endsAt: Type.Optional(Type.String({ format: 'date-time' }))
  }),
  filterable: ['startsAt'],
  sortable: ['startsAt']
})

const DETAIL = 'must be an RFC 3339 date-time such as 2026-01-01T00:00:00Z, precise to the millisecond at most, without a leap second'

t.test('a date-time is stored and returned as the same instant in UTC with milliseconds', async t => {
  const app = await buildTestApp(t, { definitions: [events] })
  const created = await post(app, '/v1/events', { name: 'launch', startsAt: '2026-01-01T02:00:00+02:00', endsAt: '2026-01-01t03:00:00.5z' })
  t.equal(created.statusCode, 201, created.body)
  t.same([body(created).startsAt, body(created).endsAt], ['2026-01-01T00:00:00.000Z', '2026-01-01T03:00:00.500Z'])
  const url = created.headers.location as string
  t.equal(body(await app.inject({ method: 'GET', url })).startsAt, '2026-01-01T00:00:00.000Z')
  const patched = await app.inject({ method: 'PATCH', url, payload: { endsAt: '2026-01-01T04:00:00.120000-01:00' } })
  t.equal(body(patched).endsAt, '2026-01-01T05:00:00.120Z', 'a PATCH too; zeros past the millisecond change nothing')
  const replaced = await app.inject({ method: 'PUT', url, payload: { name: 'launch', startsAt: '2025-12-31T19:00:00-05:00' } })
  t.same([body(replaced).startsAt, body(replaced).endsAt], ['2026-01-01T00:00:00.000Z', undefined], 'and a PUT')
})

t.test('filters and sorts compare instants, whatever spelling each was sent in', async t => {
  const app = await buildTestApp(t, { definitions: [events] })
  for (const [name, startsAt] of [['half-past', '2026-01-01T00:00:00.5Z'], ['one', '2026-01-01T00:00:01Z'], ['eve', '2026-01-01T01:30:00+02:00']]) {
    t.equal((await post(app, '/v1/events', { name, startsAt })).statusCode, 201)
  }
  const names = async (query: string): Promise<string[]> => {
    const answer = await app.inject({ method: 'GET', url: `/v1/events?${query}` })
    t.equal(answer.statusCode, 200, `${query}: ${answer.body}`)
    return (body(answer) as unknown as Json[]).map(event => event.name as string)
  }
  t.same(await names('sort=startsAt'), ['eve', 'half-past', 'one'], 'in time order: 23:30 the day before, then .5 s, then 1 s')
  t.same(await names('sort=-startsAt'), ['one', 'half-past', 'eve'])
  t.same(await names(`startsAt=${encodeURIComponent('2025-12-31T23:30:00Z')}`), ['eve'], 'the same instant in another spelling matches')
  t.same(await names(`startsAt[gt]=${encodeURIComponent('2026-01-01T01:00:00.7+01:00')}`), ['one'], 'a bound in another offset')
  t.same(await names(`startsAt[in]=${encodeURIComponent('2026-01-01T00:00:01.000Z,2026-01-01T01:00:00.5+01:00')}`), ['half-past', 'one'])
})

t.test('a date-time the stored form cannot hold exactly is a 400, in a body and in a query', async t => {
  const app = await buildTestApp(t, { definitions: [events] })
  for (const startsAt of ['2026-06-30T23:59:60Z', '2026-01-01T00:00:00.1234Z', '2026-02-30T00:00:00Z', '0000-01-01T00:30:00+01:00', '2026-01-01T24:00:00Z', '2026-01-01']) {
    const refused = assertProblem(t, await post(app, '/v1/events', { name: 'x', startsAt }), 400, 'validation')
    t.same(refused.errors, [{ in: 'body', pointer: '/startsAt', detail: DETAIL }], startsAt)
  }
  const query = assertProblem(t, await app.inject({ method: 'GET', url: '/v1/events?startsAt[lt]=2026-06-30T23:59:60Z' }), 400, 'validation')
  t.same(query.errors, [{ in: 'query', pointer: '/startsAt[lt]', detail: DETAIL }])
  t.same(body(await app.inject({ method: 'GET', url: '/v1/events' })), [], 'nothing was stored')
})
