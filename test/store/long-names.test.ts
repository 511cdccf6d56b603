/**
 * Names the engine derives from a definition (indexes, tally triggers and
 * their functions) can be longer than PostgreSQL keeps: it cuts identifiers
 * at 63 bytes, so two long names that differ only past that point became one.
 * A second tally function then replaced the first, a second trigger the
 * first, and an index was never made (and "made" again on every start).
 * Held on both databases: counts stay exact and a second start has nothing to do.
 */
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { defineResource } from '../../src/resources/define.js'
import { authenticatedByDefault, post, testConfig } from '../helper.js'
import { otherConnection, totalCount } from '../support/other-connection.js'

// Two fields (as long as a column name may be) whose derived names agree on their first 63 bytes.
const common = 'theStageOfThisGadgetAsSeenByTheWarehouseTeamInTheirMonth'
const first = `${common}Review`
const second = `${common}Rerun`
const stage = Type.Union([Type.Literal('new'), Type.Literal('old')], { default: 'new' })
const gadgets = defineResource({
  collection: 'warehouse-gadgets',
  fields: Type.Object({ name: Type.String(), [first]: stage, [second]: stage }),
  sortable: [first, second],
  filterable: [first, second]
})

t.test('long derived names stay distinct: tallies count, indexes exist, a restart has nothing to do', async t => {
  const config = await testConfig(t)
  const app = authenticatedByDefault(await buildApp({ config, definitions: [gadgets] }))
  t.teardown(() => app.close())
  const db = await otherConnection(t)
  const values = [['new', 'old'], ['old', 'old'], ['old', 'new'], ['new', 'new'], ['old', 'old']]
  for (const [a, b] of values) t.equal((await post(app, '/v1/warehouse-gadgets', { name: 'g', [first]: a, [second]: b })).statusCode, 201)
  t.equal((await app.inject({ method: 'PATCH', url: '/v1/warehouse-gadgets/1', payload: { [first]: 'old' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/warehouse-gadgets/2' })).statusCode, 204)
  for (const field of [first, second]) {
    for (const value of ['new', 'old']) {
      t.equal(await totalCount(app, `/v1/warehouse-gadgets?${field}=${value}`), await db.count('"warehouse-gadgets"', `"${field}" = '${value}'`), `${field.slice(-6)} = ${value}`)
    }
  }
  t.same((await app.store.migrate()).applied, [], 'a second migrate finds every index and tally in place')
  // Sorting by either field pages through every record once.
  for (const field of [first, second]) {
    const response = await app.inject({ method: 'GET', url: `/v1/warehouse-gadgets?sort=-${field}` })
    t.equal(response.statusCode, 200)
    t.equal(JSON.parse(response.body).length, 4, `sort by ${field.slice(-6)}`)
  }
})
