// Write-only fields (`writeOnly: true`, secrets): taken on writes, kept in storage, never shown in a
// representation, a list or the document's response schemas, and kept by a PUT that leaves them out,
// since a client never reads one to send back. The stored values are read from the store itself.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { buildModel } from '../../src/resources/model.js'
import { assertProblem, body, buildTestApp, pointers, type Json } from '../helper.js'

const vaults = defineResource({
  collection: 'vaults',
  fields: Type.Object({
    name: Type.String({ minLength: 1 }),
    pin: Type.String({ writeOnly: true, minLength: 4 }),
    hint: Type.Optional(Type.String({ writeOnly: true })),
    salt: Type.String({ writeOnly: true, default: 'pepper' })
  }),
  filterable: ['name'],
  sortable: ['name']
})
const resource = buildModel([vaults]).get('vaults')
const SECRETS = ['pin', 'hint', 'salt']

t.test('a write-only value is stored and never shown', async t => {
  const app = await buildTestApp(t, { definitions: [vaults] })
  const stored = async (id: number): Promise<Json | undefined> => (await app.store.get(resource, id))?.values

  const created = await app.inject({ method: 'POST', url: '/v1/vaults', payload: { name: 'front door', pin: '1234', hint: 'birthday' } })
  t.equal(created.statusCode, 201)
  const record = body(created)
  t.same(await stored(record.id), { name: 'front door', pin: '1234', hint: 'birthday', salt: 'pepper' }, 'stored, with the default')
  for (const secret of SECRETS) t.notOk(secret in record, `the 201 leaves out ${secret}`)

  const read = body(await app.inject({ method: 'GET', url: `/v1/vaults/${record.id as number}` }))
  const listed = body(await app.inject({ method: 'GET', url: '/v1/vaults' })) as unknown as Json[]
  for (const secret of SECRETS) {
    t.notOk(secret in read, `GET leaves out ${secret}`)
    t.notOk(secret in listed[0]!, `the list leaves out ${secret}`)
  }
  t.notMatch(created.body + JSON.stringify(read) + JSON.stringify(listed), /1234|birthday|pepper/, 'no secret anywhere in a body')

  // Nothing in a query reaches a secret: not a sparse fieldset, a filter or a sort.
  for (const [query, pointer] of [['fields=pin', '/fields'], ['pin=1234', '/pin'], ['sort=pin', '/sort'], ['hint[like]=b*', '/hint[like]']] as const) {
    t.same(pointers(assertProblem(t, await app.inject({ method: 'GET', url: `/v1/vaults?${query}` }), 400, 'validation')), [pointer], query)
  }

  const missing = assertProblem(t, await app.inject({ method: 'POST', url: '/v1/vaults', payload: { name: 'gate' } }), 400, 'validation')
  t.same(pointers(missing), ['/pin'], 'a required secret is required on create')
  const short = assertProblem(t, await app.inject({ method: 'POST', url: '/v1/vaults', payload: { name: 'gate', pin: '12' } }), 400, 'validation')
  t.notMatch(JSON.stringify(short), /"12"/, 'the problem names the field, not the value')
})

t.test('a GET body edited and PUT back keeps the write-only values it could not show', async t => {
  const app = await buildTestApp(t, { definitions: [vaults] })
  const stored = async (id: number): Promise<Json | undefined> => (await app.store.get(resource, id))?.values
  const record = body(await app.inject({ method: 'POST', url: '/v1/vaults', payload: { name: 'safe', pin: '1234', hint: 'year', salt: 'salt-1' } }))
  const url = `/v1/vaults/${record.id as number}`

  const read = await app.inject({ method: 'GET', url })
  const edited = await app.inject({ method: 'PUT', url, payload: { ...body(read), name: 'wall safe' }, headers: { 'if-match': String(read.headers.etag) } })
  t.equal(edited.statusCode, 200, edited.body)
  t.equal(body(edited).name, 'wall safe')
  t.same(await stored(record.id), { name: 'wall safe', pin: '1234', hint: 'year', salt: 'salt-1' }, 'the required, the optional and the defaulted secret are all kept')

  const replaced = await app.inject({ method: 'PUT', url, payload: { name: 'wall safe', pin: '9876' } })
  t.equal(replaced.statusCode, 200)
  t.same(await stored(record.id), { name: 'wall safe', pin: '9876', hint: 'year', salt: 'salt-1' }, 'a secret the PUT sends replaces the stored one')
  t.not(replaced.headers.etag, edited.headers.etag, 'a new secret is a new version, though the representation looks the same')
  t.equal((await app.inject({ method: 'PATCH', url, payload: { name: 'x' }, headers: { 'if-match': String(edited.headers.etag) } })).statusCode, 412,
    'so a client holding the old ETag cannot overwrite it unseen')

  const refused = await app.inject({ method: 'PUT', url, payload: { name: 'wall safe', pin: '1' } })
  t.same(pointers(assertProblem(t, refused, 400, 'validation')), ['/pin'])
  t.equal((await stored(record.id))?.pin, '9876', 'a refused PUT changes nothing')
})

t.test('a merge patch sets, removes or resets write-only values like any other', async t => {
  const app = await buildTestApp(t, { definitions: [vaults] })
  const stored = async (id: number): Promise<Json | undefined> => (await app.store.get(resource, id))?.values
  const record = body(await app.inject({ method: 'POST', url: '/v1/vaults', payload: { name: 'locker', pin: '1234', hint: 'h', salt: 's' } }))
  const url = `/v1/vaults/${record.id as number}`
  const patch = async (payload: Json) => await app.inject({ method: 'PATCH', url, payload, headers: { 'content-type': 'application/merge-patch+json' } })

  const changed = await patch({ pin: '5555' })
  t.equal(changed.statusCode, 200)
  for (const secret of SECRETS) t.notOk(secret in body(changed), `the 200 leaves out ${secret}`)
  t.same(await stored(record.id), { name: 'locker', pin: '5555', hint: 'h', salt: 's' })
  t.equal((await patch({ hint: null, salt: null })).statusCode, 200)
  t.same(await stored(record.id), { name: 'locker', pin: '5555', salt: 'pepper' }, 'null removes the optional secret and resets the defaulted one')
  t.same(pointers(assertProblem(t, await patch({ pin: null }), 400, 'validation')), ['/pin'], 'a required secret cannot be removed')
  t.equal((await stored(record.id))?.pin, '5555')
})

t.test('the document takes write-only fields in request bodies only', async t => {
  const app = await buildTestApp(t, { definitions: [vaults] })
  const schemas = body(await app.inject({ method: 'GET', url: '/openapi.json' })).components.schemas as Record<string, Json>
  for (const secret of SECRETS) {
    t.notOk(secret in schemas.Vault!.properties, `the representation has no ${secret}`)
    t.notOk(secret in schemas.VaultSparse!.properties, `a list item has no ${secret}`)
    t.equal(schemas.VaultCreate!.properties[secret].writeOnly, true, `a create body takes ${secret}, marked write-only`)
    t.equal(schemas.VaultReplace!.properties[secret].writeOnly, true)
    t.notOk('default' in schemas.VaultReplace!.properties[secret], `a PUT left without ${secret} gets no default`)
  }
  t.same(schemas.VaultCreate!.required, ['name', 'pin'])
  t.same(schemas.VaultReplace!.required, ['name'], 'a PUT may leave every secret out')
  t.match(schemas.VaultReplace!.description, /a missing write-only field keeps its stored value/)
})
