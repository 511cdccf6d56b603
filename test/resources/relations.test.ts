import { Type } from '@sinclair/typebox'
import t from 'tap'
import { belongsTo, defineResource, hasMany } from '../../src/resources/define.js'
import { assertProblem, body, buildTestApp, createProject, pointers, post, type Json } from '../helper.js'

t.test('related collections: GET lists the children, POST creates one with the key set', async t => {
  const app = await buildTestApp(t)
  const road = await createProject(app, { name: 'Road' })
  const bridge = await createProject(app, { name: 'Bridge' })

  const created = await post(app, `/v1/projects/${road.id}/tasks`, { name: 'Dig', priority: 1 })
  t.equal(created.statusCode, 201)
  const task = body(created)
  t.equal(task.projectId, road.id)
  t.equal(created.headers.location, `/v1/tasks/${task.id}`)
  t.same(task.links, { self: `/v1/tasks/${task.id}`, project: `/v1/projects/${road.id}` })
  await post(app, '/v1/tasks', { name: 'Paint', projectId: bridge.id })

  const listed = await app.inject({ method: 'GET', url: `/v1/projects/${road.id}/tasks` })
  t.equal(listed.statusCode, 200)
  t.same(body(listed).map((item: { name: string }) => item.name), ['Dig'])

  const elsewhere = assertProblem(t, await post(app, `/v1/projects/${road.id}/tasks`, { name: 'x', projectId: bridge.id }), 400)
  t.same(elsewhere.errors, [{ in: 'body', pointer: '/projectId', detail: `must be ${road.id}, the id in the path, or be left out` }], 'the key comes from the path, not the body')
  const echoed = await post(app, `/v1/projects/${road.id}/tasks`, { name: 'Copied', projectId: road.id })
  t.equal(echoed.statusCode, 201, 'a body copied from a task may repeat the path\'s key')
  t.equal(body(echoed).projectId, road.id)
  const allNamed = assertProblem(t, await post(app, `/v1/projects/${road.id}/tasks`, { name: 5, projectId: 4242 }), 400)
  t.same(allNamed.errors, [
    { in: 'body', pointer: '/name', detail: 'must be string, not integer' },
    { in: 'body', pointer: '/projectId', detail: `must be ${road.id}, the id in the path, or be left out` }
  ], 'named beside the schema\'s faults, and not looked up as a missing row')
  t.same(pointers(assertProblem(t, await post(app, `/v1/projects/${road.id}/tasks`, { name: 'x', projectId: '1' }), 400)), ['/projectId'], 'a key of the wrong type is the schema\'s to name')
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects/999/tasks' }), 404)
  assertProblem(t, await post(app, '/v1/projects/999/tasks', { name: 'orphan' }), 404)
})

t.test('a foreign key to a missing row is 400 naming the field', async t => {
  const app = await buildTestApp(t)
  const problem = assertProblem(t, await post(app, '/v1/tasks', { name: 'Orphan', projectId: 4242 }), 400, 'validation')
  t.same(problem.errors, [{ in: 'body', pointer: '/projectId', detail: 'refers to project 4242, which does not exist' }])

  const project = await createProject(app)
  const task = body(await post(app, '/v1/tasks', { name: 'Kept', projectId: project.id }))
  const moved = await app.inject({ method: 'PATCH', url: `/v1/tasks/${task.id}`, payload: { projectId: 4243 } })
  t.same(pointers(assertProblem(t, moved, 400)), ['/projectId'])
  t.equal(body(await app.inject({ method: 'GET', url: `/v1/tasks/${task.id}` })).projectId, project.id, 'unchanged')

  const both = assertProblem(t, await post(app, '/v1/tasks', { name: 5, projectId: 4242, priority: 9 }), 400, 'validation')
  t.same(pointers(both), ['/name', '/priority', '/projectId'], 'a missing row is named beside the schema\'s faults, in one 400')
  t.equal(both.errors.find((issue: { pointer: string }) => issue.pointer === '/projectId').detail, 'refers to project 4242, which does not exist')
  const patched = assertProblem(t, await app.inject({ method: 'PATCH', url: `/v1/tasks/${task.id}`, payload: { projectId: 4243, priority: 0, id: task.id + 1 } }), 400)
  t.same(pointers(patched), ['/id', '/priority', '/projectId'], 'on PATCH beside a changed read-only value too')
  const mistyped = assertProblem(t, await post(app, '/v1/tasks', { name: 'x', projectId: '4242' }), 400)
  t.same(mistyped.errors, [{ in: 'body', pointer: '/projectId', detail: 'must be integer, not string' }], 'a key of the wrong type is the schema\'s to name, and not looked up')
  const belowMinimum = assertProblem(t, await post(app, '/v1/tasks', { name: 5, projectId: 0 }), 400)
  t.same(belowMinimum.errors, [{ in: 'body', pointer: '/name', detail: 'must be string, not integer' }, { in: 'body', pointer: '/projectId', detail: 'must be >= 1' }],
    'a key the schema refuses is named once, by the schema')
  t.same(pointers(assertProblem(t, await post(app, `/v1/projects/${project.id}/tasks`, { name: 5 }), 400)), ['/name'])
  t.same(pointers(assertProblem(t, await post(app, '/v1/projects/4242/tasks', { name: 5 }), 400)), ['/name'], 'a nested create refuses its body before looking up the parent')
})

t.test('deleting a project cascades to its tasks', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app)
  const task = body(await post(app, `/v1/projects/${project.id}/tasks`, { name: 'Gone with it' }))
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/projects/${project.id}` })).statusCode, 204)
  assertProblem(t, await app.inject({ method: 'GET', url: `/v1/tasks/${task.id}` }), 404)
})

// A domain of its own shows the engine is generic: restrict, optional keys, a custom singular.
const authors = defineResource({
  collection: 'authors',
  fields: Type.Object({ name: Type.String({ minLength: 1 }) }),
  relations: { books: hasMany('books', { foreignKey: 'authorId' }) }
})
const books = defineResource({
  collection: 'books',
  fields: Type.Object({ name: Type.String({ minLength: 1 }), authorId: Type.Optional(Type.Integer()) }),
  relations: { author: belongsTo('authors', { foreignKey: 'authorId' }) }
})

t.test('deleting a row still referenced under restrict is 409', async t => {
  const app = await buildTestApp(t, { definitions: [authors, books] })
  const author = body(await post(app, '/v1/authors', { name: 'Le Guin' }))
  const book = body(await post(app, `/v1/authors/${author.id}/books`, { name: 'The Dispossessed' }))
  const problem = assertProblem(t, await app.inject({ method: 'DELETE', url: `/v1/authors/${author.id}` }), 409, 'still-referenced')
  t.match(problem.detail, /1 books/)
  t.equal((await app.inject({ method: 'GET', url: `/v1/authors/${author.id}` })).statusCode, 200, 'not deleted')

  t.equal((await app.inject({ method: 'DELETE', url: `/v1/books/${book.id}` })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/authors/${author.id}` })).statusCode, 204, 'deletable once unreferenced')
})

t.test('a belongs-to link is absent while its key is null', async t => {
  const app = await buildTestApp(t, { definitions: [authors, books] })
  const author = body(await post(app, '/v1/authors', { name: 'Anonymous' }))
  const loose = body(await post(app, '/v1/books', { name: 'Beowulf' }))
  t.same(loose.links, { self: `/v1/books/${loose.id}` })
  const linked = await app.inject({ method: 'PATCH', url: `/v1/books/${loose.id}`, payload: { authorId: author.id } })
  t.same(body(linked).links, { self: `/v1/books/${loose.id}`, author: `/v1/authors/${author.id}` })
  const unlinked = await app.inject({ method: 'PATCH', url: `/v1/books/${loose.id}`, payload: { authorId: null } })
  t.same(body(unlinked).links, { self: `/v1/books/${loose.id}` })
  t.notOk('authorId' in body(unlinked))
})

t.test('a foreign key no id can have (0, negative), where the schema allows it, is a missing row, not a 500', async t => {
  const app = await buildTestApp(t, { definitions: [authors, books] })
  const book = body(await post(app, '/v1/books', { name: 'Beowulf' }))
  for (const authorId of [0, -1]) {
    const created = assertProblem(t, await post(app, '/v1/books', { name: 'Orphan', authorId }), 400, 'validation')
    t.same(created.errors, [{ in: 'body', pointer: '/authorId', detail: `refers to author ${authorId}, which does not exist` }], `POST with ${authorId}`)
    const replaced = assertProblem(t, await app.inject({ method: 'PUT', url: `/v1/books/${book.id}`, payload: { name: 'Beowulf', authorId } }), 400)
    t.same(pointers(replaced), ['/authorId'], `PUT with ${authorId}`)
    const patched = assertProblem(t, await app.inject({ method: 'PATCH', url: `/v1/books/${book.id}`, payload: { authorId, name: '' } }), 400)
    t.same(pointers(patched), ['/authorId', '/name'], `PATCH with ${authorId}, beside a fault of the schema`)
  }
  t.notOk('authorId' in body(await app.inject({ method: 'GET', url: `/v1/books/${book.id}` })), 'nothing was stored')
})

t.test('two relations from one parent to one child each get their own paths, bodies and operations', async t => {
  const people = defineResource({
    collection: 'people',
    singular: 'person',
    fields: Type.Object({ name: Type.String() }),
    relations: { authored: hasMany('books', { foreignKey: 'authorId', onDelete: 'cascade' }), edited: hasMany('books', { foreignKey: 'editorId' }) }
  })
  const books = defineResource({
    collection: 'books',
    fields: Type.Object({ name: Type.String(), authorId: Type.Integer(), editorId: Type.Optional(Type.Integer()) }),
    relations: { author: belongsTo('people', { foreignKey: 'authorId' }), editor: belongsTo('people', { foreignKey: 'editorId' }) }
  })
  // Both relations used to derive the schema BookCreateInPerson, and start-up failed.
  const app = await buildTestApp(t, { definitions: [people, books] })
  const ann = body(await post(app, '/v1/people', { name: 'ann' }))
  const bob = body(await post(app, '/v1/people', { name: 'bob' }))
  const written = body(await post(app, `/v1/people/${ann.id as number}/authored`, { name: 'Dunes', editorId: bob.id }))
  t.same([written.authorId, written.editorId], [ann.id, bob.id], 'the path sets the author')
  const edited = body(await post(app, `/v1/people/${bob.id as number}/edited`, { name: 'Tides', authorId: ann.id }))
  t.same([edited.authorId, edited.editorId], [ann.id, bob.id], 'the path sets the editor')
  t.same(pointers(assertProblem(t, await post(app, `/v1/people/${bob.id as number}/edited`, { name: 'x', authorId: ann.id, editorId: ann.id }), 400, 'validation')), ['/editorId'],
    'the key the path sets may not name another')
  const names = async (url: string): Promise<string[]> => (body(await app.inject({ method: 'GET', url })) as unknown as Json[]).map(book => book.name as string)
  t.same(await names(`/v1/people/${ann.id as number}/authored`), ['Dunes', 'Tides'])
  t.same(await names(`/v1/people/${bob.id as number}/edited`), ['Dunes', 'Tides'])
  t.same(await names(`/v1/people/${ann.id as number}/edited`), [])

  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const authored = document.paths['/v1/people/{id}/authored']
  const editedPath = document.paths['/v1/people/{id}/edited']
  t.same([authored.get.operationId, authored.post.operationId, editedPath.get.operationId, editedPath.post.operationId],
    ['listPersonAuthored', 'createPersonAuthoredBook', 'listPersonEdited', 'createPersonEditedBook'])
  // Each body may leave out the key its path sets, and must carry the other where the book requires it.
  t.same(document.components.schemas.BookCreateInPersonByAuthorId.required, ['name'])
  t.same(document.components.schemas.BookCreateInPersonByEditorId.required, ['name', 'authorId'])
  t.match(document.components.schemas.BookCreateInPersonByAuthorId.properties.authorId, { type: 'integer', description: /^Comes from the path/ })

  assertProblem(t, await app.inject({ method: 'DELETE', url: `/v1/people/${bob.id as number}` }), 409, 'still-referenced')
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/people/${ann.id as number}` })).statusCode, 204, 'the author relation cascades')
  t.same(await names('/v1/books'), [])
})
