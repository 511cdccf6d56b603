// The document lists a problem only on the operations that can answer it, and shows it as
// that operation answers it: about its own resource, at its own path.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { belongsTo, defineResource, hasMany } from '../../src/resources/define.js'
import { EXAMPLE_ID } from '../../src/resources/header-examples.js'
import { ADMIN, assertProblem, bearer, body, buildTestApp, post, type Json } from '../helper.js'

type Operation = { responses: Record<string, { description: string, content?: Record<string, { example?: Json }> }> }

const problemExample = (operation: Operation, status: number): Json => operation.responses[String(status)]!.content!['application/problem+json']!.example!

/** Cabinets hold folders (deleted with them), folders hold files (which restrict), and stamps refer to files without a has-many. */
const cabinets = defineResource({
  collection: 'cabinets',
  fields: Type.Object({ name: Type.String() }),
  relations: { folders: hasMany('folders', { foreignKey: 'cabinetId', onDelete: 'cascade' }) }
})
const folders = defineResource({
  collection: 'folders',
  fields: Type.Object({ name: Type.String(), cabinetId: Type.Integer() }),
  relations: { cabinet: belongsTo('cabinets', { foreignKey: 'cabinetId' }), files: hasMany('files', { foreignKey: 'folderId' }) },
  unique: ['name'],
  requireIfMatch: true
})
const files = defineResource({
  collection: 'files',
  fields: Type.Object({ name: Type.String(), folderId: Type.Integer() }),
  relations: { folder: belongsTo('folders', { foreignKey: 'folderId' }) }
})
const stamps = defineResource({
  collection: 'stamps',
  fields: Type.Object({ name: Type.String(), fileId: Type.Optional(Type.Integer()) }),
  relations: { file: belongsTo('files', { foreignKey: 'fileId' }) }
})

async function documentOf (app: FastifyInstance): Promise<Json> {
  return body(await app.inject({ method: 'GET', url: '/openapi.json' }))
}

t.test('every problem example is shown at its operation\'s path and about its resource, as a real answer words it', async t => {
  const app = await buildTestApp(t)
  const document = await documentOf(app)
  let examples = 0
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
    const instance = path.replace('{id}', String(EXAMPLE_ID)).replace('{eventId}', 'msg_2f0b7c6d5e418d0f1b1e54a34c8b9a3e')
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const example = response.content?.['application/problem+json']?.example
        if (example === undefined) continue
        t.equal(example.instance, instance, `${method.toUpperCase()} ${path} ${status}: instance`)
        examples++
      }
    }
  }
  t.ok(examples > 200, `${examples} examples checked`)

  // Each example equals what the service answers to such a request (but for the request id).
  const answered = async (url: string, headers: Record<string, string> = {}, method: 'GET' | 'PATCH' = 'GET'): Promise<Json> => {
    const { requestId: _id, ...rest } = body(await app.inject({ method, url, headers: { authorization: ADMIN, ...headers }, ...(method === 'PATCH' ? { payload: {} } : {}) }))
    return rest
  }
  const shown = (path: string, method: string, status: number): Json => {
    const { requestId: _id, ...rest } = problemExample(document.paths[path][method], status)
    return rest
  }
  t.same(await answered(`/v1/tasks/${EXAMPLE_ID}`), shown('/v1/tasks/{id}', 'get', 404), 'a task\'s 404 speaks of the task')
  t.same(await answered(`/v1/projects/${EXAMPLE_ID}/tasks`), shown('/v1/projects/{id}/tasks', 'get', 404), 'a related collection\'s 404 speaks of its parent')
  t.same(await answered(`/v1/api-keys/${EXAMPLE_ID}`), shown('/v1/api-keys/{id}', 'get', 404), 'an API key\'s 404')
  const task = body(await post(app, '/v1/projects', { name: 'p' }))
  const created = body(await post(app, '/v1/tasks', { name: 't', projectId: task.id }))
  t.same((await answered(`/v1/tasks/${created.id as number}`, { 'if-match': '"stale"' }, 'PATCH')).detail, shown('/v1/tasks/{id}', 'patch', 412).detail, 'a task\'s 412')
  const denied = await buildTestApp(t, { env: { AUTHZ_DENIED_STATUS: '403' } })
  const forbidden = body(await denied.inject({ method: 'GET', url: `/v1/tasks/${EXAMPLE_ID}`, headers: { authorization: bearer({ sub: 'reader', scope: 'projects:read' }) } }))
  t.equal(forbidden.detail, shown('/v1/tasks/{id}', 'get', 403).detail, 'the 403 names the scope the operation needs')
  t.equal(shown('/v1/api-keys', 'get', 403).detail, 'this needs the scope admin', 'admin routes need admin')
})

/** The statuses an operation documents. */
const statuses = (document: Json, path: string, method: string): number[] => Object.keys(document.paths[path][method].responses).map(Number)

async function seedCabinet (t: Test, app: FastifyInstance): Promise<{ cabinet: number, folder: number, file: number }> {
  const cabinet = body(await post(app, '/v1/cabinets', { name: 'c' })).id as number
  const folder = body(await post(app, '/v1/folders', { name: 'f', cabinetId: cabinet })).id as number
  const file = body(await post(app, '/v1/files', { name: 'x', folderId: folder })).id as number
  t.ok(cabinet > 0 && folder > 0 && file > 0, 'seeded')
  return { cabinet, folder, file }
}

t.test('409 and 428 are documented only where the resource can answer them, and shown as it does', async t => {
  const app = await buildTestApp(t, { definitions: [cabinets, folders, files, stamps] })
  const document = await documentOf(app)

  // A delete is refused where records not deleted with it refer to it: directly, below a cascade, or by a belongs-to alone.
  t.ok(statuses(document, '/v1/folders/{id}', 'delete').includes(409), 'folders: files restrict')
  t.ok(statuses(document, '/v1/cabinets/{id}', 'delete').includes(409), 'cabinets: the cascade to folders meets the files\' restriction')
  t.ok(statuses(document, '/v1/files/{id}', 'delete').includes(409), 'files: stamps refer to them')
  t.notOk(statuses(document, '/v1/stamps/{id}', 'delete').includes(409), 'stamps: nothing refers to them')

  // A delete says what goes with it.
  t.equal(document.paths['/v1/cabinets/{id}'].delete.responses['204'].description, 'Deleted, together with the folders that refer to it.')
  t.equal(document.paths['/v1/folders/{id}'].delete.responses['204'].description, 'Deleted.', 'files restrict: they never go with it')

  // A change clashes only where a field is unique; a create also when its Idempotency-Key is still running.
  for (const method of ['put', 'patch']) {
    t.ok(statuses(document, '/v1/folders/{id}', method).includes(409), `folders ${method}: a unique name`)
    t.notOk(statuses(document, '/v1/files/{id}', method).includes(409), `files ${method}: nothing unique`)
  }
  t.match(document.paths['/v1/folders'].post.responses['409'].description, /Another folder already has this name, or a request with the same Idempotency-Key/)
  t.equal(document.paths['/v1/files'].post.responses['409'].description, 'A request with the same Idempotency-Key is still running.')
  t.equal(problemExample(document.paths['/v1/cabinets/{id}/folders'].post, 409).detail, 'another folder already has this name', 'a related create shows its child\'s clash')

  // If-Match is required (428) only where the definition says so.
  for (const method of ['put', 'patch', 'delete']) {
    t.ok(statuses(document, '/v1/folders/{id}', method).includes(428), `folders ${method}: requireIfMatch`)
    t.notOk(statuses(document, '/v1/files/{id}', method).includes(428), `files ${method}: If-Match is optional`)
  }

  // The examples are the answers.
  const { cabinet, folder } = await seedCabinet(t, app)
  await post(app, '/v1/files', { name: 'y', folderId: folder })
  await post(app, '/v1/files', { name: 'z', folderId: folder })
  const detail = async (method: 'DELETE' | 'PATCH', url: string, headers: Record<string, string> = {}): Promise<string> =>
    assertProblem(t, await app.inject({ method, url, headers, ...(method === 'PATCH' ? { payload: { name: 'g' } } : {}) }), method === 'PATCH' ? 428 : 409).detail as string
  const folderTag = (await app.inject({ method: 'GET', url: `/v1/folders/${folder}` })).headers.etag as string
  t.equal(await detail('DELETE', `/v1/folders/${folder}`, { 'if-match': folderTag }), problemExample(document.paths['/v1/folders/{id}'].delete, 409).detail, 'a folder held by 3 files')
  t.equal(await detail('DELETE', `/v1/cabinets/${cabinet}`), problemExample(document.paths['/v1/cabinets/{id}'].delete, 409).detail, 'a cabinet whose cascade meets them')
  t.equal(await detail('PATCH', `/v1/folders/${folder}`), problemExample(document.paths['/v1/folders/{id}'].patch, 428).detail, 'a folder changed without If-Match')
})
