// Deletes that cascade: a deleted event for every record taken, at every level, whichever side declares the cascade.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { belongsTo, defineResource, hasMany } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, createProject, post, type Json } from '../helper.js'
import { ALLOW, receiver, subscribe, watchWarnings } from './support.js'

const warnings = watchWarnings()

t.test('a delete that cascades sends a deleted event for every record it took with it', async t => {
  const app = await buildTestApp(t, { env: ALLOW })
  const hook = await receiver(t)
  await subscribe(app, hook.url, ['*.deleted'])
  const project = await createProject(app)
  const tasks = await Promise.all([1, 2, 3].map(async n => body(await post(app, '/v1/tasks', { name: `child ${n}`, projectId: project.id }))))
  const other = await createProject(app)
  const kept = body(await post(app, '/v1/tasks', { name: 'elsewhere', projectId: other.id }))
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/projects/${project.id as number}` })).statusCode, 204)
  const events = (await hook.count(4)).map(item => JSON.parse(item.body) as Json)
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal(hook.received.length, 4, 'one event per deleted record, none for the other project\'s task')
  t.same(events.filter(event => event.type === 'projects.deleted').map(event => event.data), [{ id: project.id }])
  t.same(events.filter(event => event.type === 'tasks.deleted').map(event => event.data.id).sort(), tasks.map(task => task.id).sort())
  t.equal((await app.inject({ method: 'GET', url: `/v1/tasks/${kept.id as number}` })).statusCode, 200)

  // Children added while the parent is being deleted: each either lands before the delete (and gets its event) or is refused.
  const racing = await createProject(app)
  hook.received.length = 0
  const [adds, removed] = await Promise.all([
    Promise.all(Array.from({ length: 40 }, async (_, n) => {
      await new Promise(resolve => setTimeout(resolve, n))
      return await post(app, '/v1/tasks', { name: `racer ${n}`, projectId: racing.id })
    })),
    new Promise(resolve => setTimeout(resolve, 20)).then(async () => await app.inject({ method: 'DELETE', url: `/v1/projects/${racing.id as number}` }))
  ])
  t.equal(removed.statusCode, 204)
  const landed = adds.filter(add => add.statusCode === 201).map(add => body(add).id as number)
  t.comment(`${landed.length} of 40 children landed before the delete`)
  t.ok(adds.every(add => add.statusCode === 201 || add.statusCode === 400), 'a child of a deleted parent is refused')
  const raced = (await hook.count(landed.length + 1)).map(item => JSON.parse(item.body) as Json)
  await new Promise(resolve => setTimeout(resolve, 300))
  t.same(raced.filter(event => event.type === 'tasks.deleted').map(event => event.data.id as number).sort((a, b) => a - b), landed.sort((a, b) => a - b), 'every child that landed has its event')
})

t.test('cascades are followed down every level, however many records they take', async t => {
  const boards = defineResource({ collection: 'boards', fields: Type.Object({ name: Type.String() }), relations: { columns: hasMany('columns', { foreignKey: 'boardId', onDelete: 'cascade' }) } })
  const columns = defineResource({
    collection: 'columns',
    fields: Type.Object({ name: Type.String(), boardId: Type.Integer() }),
    relations: { board: belongsTo('boards', { foreignKey: 'boardId' }), cards: hasMany('cards', { foreignKey: 'columnId', onDelete: 'cascade' }) }
  })
  const cards = defineResource({ collection: 'cards', fields: Type.Object({ name: Type.String(), columnId: Type.Integer() }), relations: { column: belongsTo('columns', { foreignKey: 'columnId' }) } })
  const app = await buildTestApp(t, { env: ALLOW, definitions: [boards, columns, cards] })
  const hook = await receiver(t)
  await subscribe(app, hook.url, ['columns.deleted', 'cards.deleted'])
  const board = body(await post(app, '/v1/boards', { name: 'big' }))
  // More columns than one query asks about (500) and more events than one insert holds (200).
  const columnIds: number[] = []
  for (let i = 0; i < 502; i++) columnIds.push(body(await post(app, '/v1/columns', { name: `column ${i}`, boardId: board.id })).id as number)
  const cardIds = [body(await post(app, '/v1/cards', { name: 'first', columnId: columnIds[0] })).id, body(await post(app, '/v1/cards', { name: 'last', columnId: columnIds[501] })).id]
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/boards/${board.id as number}` })).statusCode, 204)
  const events = (await hook.count(504, 30_000)).map(item => JSON.parse(item.body) as Json)
  t.same(events.filter(event => event.type === 'columns.deleted').map(event => event.data.id).sort((a, b) => a - b), columnIds)
  t.same(events.filter(event => event.type === 'cards.deleted').map(event => event.data.id).sort((a, b) => a - b), cardIds)
})

t.test('a cascade declared only on the belongs-to side sends the deleted events too', async t => {
  // No has-many on boards: cards say how their board's delete treats them, and stickers refuse it.
  const boards = defineResource({ collection: 'boards', fields: Type.Object({ name: Type.String() }) })
  const cards = defineResource({ collection: 'cards', fields: Type.Object({ name: Type.String(), boardId: Type.Integer() }), relations: { board: belongsTo('boards', { foreignKey: 'boardId', onDelete: 'cascade' }) } })
  const stickers = defineResource({ collection: 'stickers', fields: Type.Object({ name: Type.String(), cardId: Type.Integer() }), relations: { card: belongsTo('cards', { foreignKey: 'cardId' }) } })
  const app = await buildTestApp(t, { env: ALLOW, definitions: [boards, cards, stickers] })
  const hook = await receiver(t)
  await subscribe(app, hook.url, ['*.deleted'])
  const board = body(await post(app, '/v1/boards', { name: 'b' }))
  const cardIds = await Promise.all([1, 2].map(async n => body(await post(app, '/v1/cards', { name: `card ${n}`, boardId: board.id })).id as number))
  // Before, the database cascaded and no cards.deleted was ever sent.
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/boards/${board.id as number}` })).statusCode, 204)
  const events = (await hook.count(3)).map(item => JSON.parse(item.body) as Json)
  t.same(events.filter(event => event.type === 'cards.deleted').map(event => event.data.id as number).sort((a, b) => a - b), cardIds.sort((a, b) => a - b))

  // A restriction declared only on the belongs-to side names what holds the record back.
  const kept = body(await post(app, '/v1/cards', { name: 'held', boardId: body(await post(app, '/v1/boards', { name: 'c' })).id }))
  await post(app, '/v1/stickers', { name: 's', cardId: kept.id })
  const refused = assertProblem(t, await app.inject({ method: 'DELETE', url: `/v1/cards/${kept.id as number}` }), 409, 'still-referenced')
  t.equal(refused.detail, 'this card is still referenced by 1 stickers; delete or move them first')
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  t.equal(document.paths['/v1/boards/{id}'].delete.responses['204'].description, 'Deleted, together with the cards that refer to it.')
  t.ok(document.paths['/v1/cards/{id}'].delete.responses['409'], 'a card\'s delete documents its 409')
})

t.test('the rounds above, up to a batch of deliveries in flight at once, raised no warning', async t => {
  warnings.check(t)
})
