import { Type } from '@sinclair/typebox'
import t from 'tap'
import { defineResource, belongsTo, hasMany } from '../../src/resources/define.js'
import { assertProblem, bearer, body, buildTestApp, post } from '../helper.js'

const alice = bearer({ sub: 'alice', scope: 'notes:read notes:write' })
const bob = bearer({ sub: 'bob', scope: 'notes:read notes:write' })

t.test('callers see, list, count and change only their own notes', async t => {
  const app = await buildTestApp(t)
  const mine = body(await post(app, '/v1/notes', { name: 'alice 1', body: 'secret' }, { authorization: alice }))
  await post(app, '/v1/notes', { name: 'alice 2' }, { authorization: alice })
  const theirs = body(await post(app, '/v1/notes', { name: 'bob 1', body: 'also secret' }, { authorization: bob }))
  t.equal(mine.owner, 'alice')
  t.equal(theirs.owner, 'bob')

  const list = await app.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: alice } })
  t.same(body(list).map((note: { name: string }) => note.name), ['alice 1', 'alice 2'])
  t.equal(list.headers['x-total-count'], '2', 'totals count only their own')
  t.same(body(await app.inject({ method: 'GET', url: '/v1/notes?sort=-name&cursor=', headers: { authorization: alice } })).map((note: { name: string }) => note.name), ['alice 2', 'alice 1'])

  const url = `/v1/notes/${theirs.id as number}`
  assertProblem(t, await app.inject({ method: 'GET', url, headers: { authorization: alice } }), 404)
  assertProblem(t, await app.inject({ method: 'PATCH', url, headers: { authorization: alice }, payload: { name: 'hijacked' } }), 404)
  assertProblem(t, await app.inject({ method: 'PUT', url, headers: { authorization: alice }, payload: { name: 'hijacked' } }), 404)
  assertProblem(t, await app.inject({ method: 'DELETE', url, headers: { authorization: alice } }), 404)
  t.equal(body(await app.inject({ method: 'GET', url, headers: { authorization: bob } })).name, 'bob 1', 'untouched')

  const forged = await app.inject({ method: 'PATCH', url: `/v1/notes/${mine.id as number}`, headers: { authorization: alice }, payload: { owner: 'bob' } })
  assertProblem(t, forged, 400)
  const echoed = await app.inject({ method: 'PATCH', url: `/v1/notes/${mine.id as number}`, headers: { authorization: alice }, payload: { owner: 'alice', name: 'renamed' } })
  t.equal(body(echoed).owner, 'alice', 'echoing the owner unchanged is fine')

  const all = await app.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: bearer({ sub: 'root', scope: 'admin' }) } })
  t.equal(all.headers['x-total-count'], '3', 'admin sees every owner\'s records')
})

// An owned child under a public parent: others' children never show through the relation.
const folders = defineResource({
  collection: 'folders',
  fields: Type.Object({ name: Type.String() }),
  relations: { docs: hasMany('docs', { foreignKey: 'folderId', onDelete: 'cascade' }) }
})
const docs = defineResource({
  collection: 'docs',
  fields: Type.Object({ name: Type.String(), folderId: Type.Integer() }),
  relations: { folder: belongsTo('folders', { foreignKey: 'folderId' }) },
  owner: 'owner',
  filterable: ['name']
})

t.test('others\' records never appear in related collections, filters or sorts', async t => {
  const app = await buildTestApp(t, { definitions: [folders, docs] })
  const a = bearer({ sub: 'alice', scope: 'folders:read docs:read docs:write' })
  const b = bearer({ sub: 'bob', scope: 'folders:read docs:read docs:write' })
  const folder = body(await post(app, '/v1/folders', { name: 'shared' }))
  await post(app, `/v1/folders/${folder.id as number}/docs`, { name: 'plan' }, { authorization: a })
  await post(app, `/v1/folders/${folder.id as number}/docs`, { name: 'plan' }, { authorization: b })
  const related = await app.inject({ method: 'GET', url: `/v1/folders/${folder.id as number}/docs`, headers: { authorization: a } })
  t.same(body(related).map((doc: { owner: string }) => doc.owner), ['alice'])
  t.equal(related.headers['x-total-count'], '1')
  const filtered = await app.inject({ method: 'GET', url: '/v1/docs?name=plan&sort=-createdAt', headers: { authorization: b } })
  t.same(body(filtered).map((doc: { owner: string }) => doc.owner), ['bob'])
})

t.test('a unique field of an owned resource is unique among each owner\'s records, so a clash reveals nothing of others', async t => {
  const bookmarks = defineResource({ collection: 'bookmarks', fields: Type.Object({ name: Type.String() }), owner: 'owner', unique: ['name'] })
  const app = await buildTestApp(t, { definitions: [bookmarks] })
  const a = bearer({ sub: 'alice', scope: 'bookmarks:read bookmarks:write' })
  const b = bearer({ sub: 'bob', scope: 'bookmarks:read bookmarks:write' })
  t.equal((await post(app, '/v1/bookmarks', { name: 'news' }, { authorization: a })).statusCode, 201)
  const bobs = await post(app, '/v1/bookmarks', { name: 'news' }, { authorization: b })
  t.equal(bobs.statusCode, 201, 'another owner may use the same name')
  const again = assertProblem(t, await post(app, '/v1/bookmarks', { name: 'news' }, { authorization: a }), 409, 'unique-violation')
  t.equal(again.detail, 'another bookmark already has this name', 'the field is named, not the owner column')
  const other = body(await post(app, '/v1/bookmarks', { name: 'sport' }, { authorization: b }))
  assertProblem(t, await app.inject({ method: 'PATCH', url: `/v1/bookmarks/${other.id as number}`, headers: { authorization: b }, payload: { name: 'news' } }), 409, 'unique-violation')
})

t.test('a foreign key may name only an owned parent the caller can see; others\' answer as missing ones do', async t => {
  const boards = defineResource({ collection: 'boards', fields: Type.Object({ name: Type.String() }), owner: 'owner', relations: { cards: hasMany('cards', { foreignKey: 'boardId', onDelete: 'cascade' }) } })
  const cards = defineResource({ collection: 'cards', fields: Type.Object({ name: Type.String(), boardId: Type.Integer() }), relations: { board: belongsTo('boards', { foreignKey: 'boardId' }) } })
  const app = await buildTestApp(t, { definitions: [boards, cards] })
  const scope = 'boards:read boards:write cards:read cards:write'
  const a = { authorization: bearer({ sub: 'alice', scope }) }
  const b = { authorization: bearer({ sub: 'bob', scope }) }
  const alices = body(await post(app, '/v1/boards', { name: 'alice board' }, a)).id as number
  const bobs = body(await post(app, '/v1/boards', { name: 'bob board' }, b)).id as number

  const hidden = assertProblem(t, await post(app, '/v1/cards', { name: 'sneaky', boardId: bobs }, a), 400, 'validation')
  const missing = assertProblem(t, await post(app, '/v1/cards', { name: 'lost', boardId: 999 }, a), 400, 'validation')
  t.same(hidden.errors, [{ in: 'body', pointer: '/boardId', detail: `refers to board ${bobs}, which does not exist` }])
  t.same(missing.errors, [{ in: 'body', pointer: '/boardId', detail: 'refers to board 999, which does not exist' }], 'the same answer as for no board at all')
  const alongside = assertProblem(t, await post(app, '/v1/cards', { name: 7, boardId: bobs }, a), 400, 'validation')
  t.same(alongside.errors.map((issue: { pointer: string }) => issue.pointer), ['/name', '/boardId'], 'named beside the schema\'s faults too')

  const card = body(await post(app, '/v1/cards', { name: 'mine', boardId: alices }, a))
  t.equal(card.boardId, alices, 'a parent the caller can see is fine')
  const moved = assertProblem(t, await app.inject({ method: 'PATCH', url: `/v1/cards/${card.id as number}`, headers: a, payload: { boardId: bobs } }), 400, 'validation')
  t.same(moved.errors.map((issue: { pointer: string }) => issue.pointer), ['/boardId'], 'nor may a record be moved onto one')
  assertProblem(t, await app.inject({ method: 'PUT', url: `/v1/cards/${card.id as number}`, headers: a, payload: { name: 'mine', boardId: bobs } }), 400, 'validation')
  assertProblem(t, await post(app, `/v1/boards/${bobs}/cards`, { name: 'sneaky' }, a), 404)
  t.same(body(await app.inject({ method: 'GET', url: `/v1/boards/${bobs}/cards`, headers: b })), [], 'bob\'s board has nothing of alice\'s')

  const admin = { authorization: bearer({ sub: 'root', scope: 'admin' }) }
  t.equal((await post(app, '/v1/cards', { name: 'placed', boardId: bobs }, admin)).statusCode, 201, 'admin sees every board')
})
