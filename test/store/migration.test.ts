import { Type } from '@sinclair/typebox'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { defineResource } from '../../src/resources/define.js'
import { MigrationRefused } from '../../src/store/store.js'
import { authenticatedByDefault, bearer, body, logCollector, ON_POSTGRES, post, testConfig } from '../helper.js'
import { otherConnection } from '../support/other-connection.js'

const v1 = defineResource({ collection: 'gadgets', fields: Type.Object({ name: Type.String() }) })
const v2 = defineResource({
  collection: 'gadgets',
  fields: Type.Object({
    name: Type.String(),
    color: Type.Optional(Type.String()),
    size: Type.Union([Type.Literal('s'), Type.Literal('m'), Type.Literal('l')], { default: 'm' })
  }),
  sortable: ['color'],
  filterable: ['size']
})

t.test('start-up creates tables and extends them additively', async t => {
  const config = await testConfig(t)
  const first = authenticatedByDefault(await buildApp({ config, definitions: [v1] }))
  const old = body(await post(first, '/v1/gadgets', { name: 'old' }))
  await first.close()

  const second = authenticatedByDefault(await buildApp({ config, definitions: [v2] }))
  t.teardown(() => second.close())
  const { applied } = await second.store.migrate()
  t.same(applied, [], 'a second migrate finds nothing to do')
  const kept = body(await second.inject({ method: 'GET', url: `/v1/gadgets/${old.id}` }))
  t.equal(kept.name, 'old', 'existing rows are kept')
  t.equal(kept.size, 'm', 'a new defaulted column is filled with its default')
  t.notOk('color' in kept, 'a new optional column is empty')
  const fresh = await post(second, '/v1/gadgets', { name: 'new', color: 'red', size: 'l' })
  t.equal(fresh.statusCode, 201)
  t.equal(body(fresh).color, 'red')
  // On SQLite the new enum column is counted per value from the migration on, its existing rows included.
  const count = async (query: string): Promise<string | undefined> => (await second.inject({ method: 'GET', url: `/v1/gadgets?${query}` })).headers['x-total-count'] as string | undefined
  t.same([await count('size=m'), await count('size=l'), await count('size[ne]=m'), await count('size[in]=s,l')], ['1', '1', '1', '1'], 'filtered counts on the new column')
})

t.test('destructive or incompatible changes are refused with what to do', async t => {
  const config = await testConfig(t)
  await (await buildApp({ config, definitions: [v2] })).close()

  const refusal = async (fields: Parameters<typeof Type.Object>[0]): Promise<string> => {
    try {
      const app = await buildApp({ config, definitions: [defineResource({ collection: 'gadgets', fields: Type.Object(fields as { name: ReturnType<typeof Type.String> }) })] })
      await app.close()
    } catch (error) {
      t.ok(error instanceof MigrationRefused)
      return (error as Error).message
    }
    return 'not refused'
  }
  const base = { name: Type.String(), size: Type.String({ default: 'm' }) }
  t.match(await refusal({ name: Type.String(), size: Type.String({ default: 'm' }) }), /gadgets\.color exists in the database but not in the definition/, 'dropping a field')
  t.match(await refusal({ ...base, color: Type.Optional(Type.Integer()) }), /gadgets\.color is (TEXT|text) in the database but the definition needs integer/, 'changing a type')
  t.match(await refusal({ ...base, color: Type.Optional(Type.String()), weight: Type.Number() }), /gadgets\.weight is new and required but has no default/, 'a new required field')
  const unchanged = authenticatedByDefault(await buildApp({ config, definitions: [v2] }))
  t.equal(body(await unchanged.inject({ method: 'GET', url: '/v1/gadgets' })).length, 0, 'the database was left as it was')
  await unchanged.close()
})

t.test('a unique index the definitions no longer declare is dropped; an operator\'s own is kept', async t => {
  const config = await testConfig(t, { env: { LOG_LEVEL: 'info' } })
  const unique = defineResource({ collection: 'badges', fields: Type.Object({ name: Type.String(), code: Type.Optional(Type.String()) }), unique: ['name'] })
  const first = authenticatedByDefault(await buildApp({ config, definitions: [unique] }))
  t.equal((await post(first, '/v1/badges', { name: 'gold', code: 'g' })).statusCode, 201)
  t.equal((await post(first, '/v1/badges', { name: 'gold' })).statusCode, 409)
  await first.close()
  const other = await otherConnection(t)
  await other.run('create unique index badges_code_by_hand on badges (code)')

  // Taken out of `unique`: the old index would still refuse a second "gold".
  const log = logCollector()
  const relaxed = defineResource({ collection: 'badges', fields: Type.Object({ name: Type.String(), code: Type.Optional(Type.String()) }) })
  const second = authenticatedByDefault(await buildApp({ config, definitions: [relaxed], logStream: log }))
  t.teardown(() => second.close())
  const update = log.lines.find(line => line.msg === 'database schema updated')
  t.same(update?.applied, ['drop unique index badges_name_key (no longer declared)'], 'recorded as a migration step')
  t.equal((await post(second, '/v1/badges', { name: 'gold' })).statusCode, 201, 'the definitions are followed')
  t.equal((await post(second, '/v1/badges', { name: 'silver', code: 'g' })).statusCode, 409, 'an index of a name the engine never gives stays')
})

t.test('a unique index whose name PostgreSQL needs shortened is recognised as the engine\'s', async t => {
  // `{table}_{field}_key` is 74 bytes here: PostgreSQL keeps 63, so the engine stores a shortened name.
  const collection = 'certificates-of-achievement'
  const fields = Type.Object({ name: Type.String(), registrationNumberAtTheIssuingBody: Type.Optional(Type.String()) })
  const config = await testConfig(t, { env: { LOG_LEVEL: 'info' } })
  const strict = defineResource({ collection, fields, unique: ['name', 'registrationNumberAtTheIssuingBody'] })
  const first = authenticatedByDefault(await buildApp({ config, definitions: [strict] }))
  t.equal((await post(first, `/v1/${collection}`, { name: 'a', registrationNumberAtTheIssuingBody: 'R-1' })).statusCode, 201)
  const clash = await post(first, `/v1/${collection}`, { name: 'b', registrationNumberAtTheIssuingBody: 'R-1' })
  t.equal(clash.statusCode, 409)
  t.equal(body(clash).detail, 'another certificates-of-achievement already has this registrationNumberAtTheIssuingBody', 'the 409 names the field, not every unique one')
  await first.close()

  const log = logCollector()
  const relaxed = defineResource({ collection, fields, unique: ['name'] })
  const second = authenticatedByDefault(await buildApp({ config, definitions: [relaxed], logStream: log }))
  t.teardown(() => second.close())
  const applied = log.lines.find(line => line.msg === 'database schema updated')?.applied as string[] | undefined
  t.match(applied, [/^drop unique index certificates-of-achievement_registrationNumber\w+ \(no longer declared\)$/], 'the stale index is dropped')
  t.equal((await post(second, `/v1/${collection}`, { name: 'b', registrationNumberAtTheIssuingBody: 'R-1' })).statusCode, 201, 'the definitions are followed')
})

t.test('an owned resource\'s unique index from before uniqueness was per owner is replaced', async t => {
  const config = await testConfig(t, { env: { LOG_LEVEL: 'info' } })
  const plain = defineResource({ collection: 'tickets', fields: Type.Object({ name: Type.String() }) })
  await (await buildApp({ config, definitions: [plain] })).close()
  // What an earlier version made for `unique: ['name']`: one index across owners.
  const other = await otherConnection(t)
  await other.run('alter table tickets add column owner text')
  await other.run('create unique index tickets_name_key on tickets (name)')

  const log = logCollector()
  const owned = defineResource({ collection: 'tickets', fields: Type.Object({ name: Type.String() }), owner: 'owner', unique: ['name'] })
  const app = await buildApp({ config, definitions: [owned], logStream: log })
  t.teardown(() => app.close())
  const applied = log.lines.find(line => line.msg === 'database schema updated')?.applied as string[]
  t.ok(applied.includes('create unique index tickets_owner_name_key'), applied.join('; '))
  t.ok(applied.includes('drop unique index tickets_name_key (no longer declared)'))
  const as = (sub: string) => ({ authorization: bearer({ sub, scope: 'tickets:read tickets:write' }) })
  t.equal((await post(app, '/v1/tickets', { name: 'row 1' }, as('alice'))).statusCode, 201)
  t.equal((await post(app, '/v1/tickets', { name: 'row 1' }, as('bob'))).statusCode, 201)
  t.equal((await post(app, '/v1/tickets', { name: 'row 1' }, as('alice'))).statusCode, 409)
})

t.test('an API key expiry past year 9999, which the old CLI could store, is repaired on start', async t => {
  const config = await testConfig(t, { env: { LOG_LEVEL: 'info' } })
  await (await buildApp({ config, definitions: [v1] })).close()
  const other = await otherConnection(t)
  // `keys create --expires 3000000d` before the CLI bounded it; PostgreSQL reads the year without the sign.
  const farAway = ON_POSTGRES ? '10190-08-15T02:00:30.318Z' : '+010190-08-15T02:00:30.318Z'
  await other.run(`insert into resourcery_api_keys (name, prefix, hash, scopes, "createdAt", "expiresAt") values ('old', 'rsy_old', 'hash-of-old', '["admin"]', '2026-01-01T00:00:00.000Z', '${farAway}')`)

  const log = logCollector()
  const app = authenticatedByDefault(await buildApp({ config, definitions: [v1], logStream: log }))
  t.teardown(() => app.close())
  t.same(log.lines.find(line => line.msg === 'database schema updated')?.applied, ['set the expiry of API key 1 (+010190-08-15T02:00:30.318Z) to 9999-12-31T23:59:59.999Z'])
  const keys = await app.inject({ method: 'GET', url: '/v1/api-keys' })
  t.equal(keys.statusCode, 200, 'the list serializes again (it was a 500)')
  t.same(body(keys).map((key: { expiresAt: string }) => key.expiresAt), ['9999-12-31T23:59:59.999Z'])
})
