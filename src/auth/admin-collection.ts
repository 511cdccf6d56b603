/**
 * What every admin collection (/v1/api-keys, /v1/clients, /v1/webhooks)
 * shares: the admin scope, how its operations are documented, and its list,
 * get and remove routes. Each collection's create differs (what it checks,
 * which secret it shows once) and stays with the collection.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ResourceNotFound } from '../errors.js'
import { checkBeforeCreating } from '../http/conditional.js'
import { linkBase } from '../http/instance.js'
import { IdParams } from '../resources/derive.js'
import { collectionPath, itemPath } from '../resources/links.js'
import { EXAMPLE_ID } from '../resources/header-examples.js'
import { scopeProblem } from '../resources/problem-examples.js'
import { ADMIN_ITEM_READ, ADMIN_LIST_READ, ADMIN_REMOVE, CREATE_CONDITIONS, createPreconditionProblem, jsonResponse, listProblems, locationHeader, notModified, problemResponses } from '../resources/responses.js'
import type { LiveItems } from '../store/live-items.js'
import { adminPage, adminPageHeaders, adminPageQuery } from './admin-pages.js'
import { adminItemHeaders, adminListTag, changedSince, checkBeforeRemoving, sendAdminItem, sendAdminList } from './admin-conditional.js'
import { ADMIN_SCOPE } from './authenticate.js'
import { scopeNote, securityFor } from './openapi-security.js'

/** When an admin item was made, used, expires or was disabled, as the admin schemas show it. */
export const Timestamp = Type.String({ format: 'date-time' })
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()])

/** The 403 of every admin route. */
export const ADMIN_FORBIDDEN = scopeProblem(ADMIN_SCOPE)

/** 404: no admin item (`noun`: API key, OAuth client, webhook subscription) with that id. */
export const noSuchItem = (noun: string, id: number): Error => new ResourceNotFound(`no ${noun} with id ${id}`)

/** The OpenAPI operation of an admin route: tagged, described with the scope it needs. */
export function adminOperation (tag: string, operationId: string, summary: string, extra: Record<string, unknown>): Record<string, unknown> {
  return { tags: [tag], operationId, summary, description: `${summary}. ${scopeNote(ADMIN_SCOPE)}`, security: securityFor(ADMIN_SCOPE), ...extra }
}

export interface AdminCreate {
  /** The collection's path, under /v1: `/api-keys`. */
  readonly path: string
  /** `$id` of the request body's schema. */
  readonly body: string
  /** `$id` of the 201's schema, which holds the secret shown only then. */
  readonly created: string
  /** The 201's description. */
  readonly shown: string
  /** The item the document shows, as a GET shows it (without its secret). */
  readonly example: AdminExample
}

/** An admin item as the document shows it. */
export interface AdminExample { readonly id: number }

const ADMIN_CREATE = Type.Object(CREATE_CONDITIONS)

/** The operation of an admin create: its body, a 201 with Location, and its refusals. */
export function adminCreateOperation (tag: string, operationId: string, summary: string, { path, body, created, shown, example }: AdminCreate): Record<string, unknown> {
  return adminOperation(tag, operationId, summary, {
    headers: ADMIN_CREATE,
    body: Type.Ref(body),
    response: { 201: jsonResponse(shown, Type.Ref(created), { ...locationHeader(itemPath(path.slice(1), example.id)), ...adminItemHeaders(example) }), ...problemResponses([400, 401, ADMIN_FORBIDDEN, createPreconditionProblem(collectionPath(path.slice(1))), 413, 415, 429]) }
  })
}

/**
 * Before an item is created: the create's preconditions on its collection
 * (412), whose current tag is the whole list's, as a GET without a page shows it.
 */
export async function checkBeforeAdminCreate<T> (request: FastifyRequest, items: LiveItems<T>, view: (item: T) => object): Promise<void> {
  await checkBeforeCreating(request.headers, linkBase(request.url), async () => adminListTag(await adminPage(request, items, view)))
}

/** Route config of admin routes: the scope, and for writes the one body type they take. */
export const adminConfig = { scope: ADMIN_SCOPE }
export const adminWriteConfig = { ...adminConfig, accepts: ['application/json'] }

/** One admin collection, as its list, get and remove routes need it. */
export interface AdminCollection<T> {
  /** Under /v1: `/api-keys`. */
  readonly path: string
  /** The OpenAPI tag its operations are grouped under. */
  readonly tag: string
  /** How problems and descriptions name one item: `API key`. */
  readonly noun: string
  /** The operationIds' nouns (`listApiKeys`, `getApiKey`); `singular` is also the `$id` of an item's schema. */
  readonly plural: string
  readonly singular: string
  /** The collection's live items, and how a GET shows one. */
  readonly items: LiveItems<T>
  readonly view: (item: T) => object
  /** One as the document shows it. */
  readonly example: AdminExample
  /** The most items a page may ask for (MAX_PAGE_LIMIT). */
  readonly maxLimit: number
  /** Revokes or deletes one: false when there was none. */
  readonly revoke: (id: number) => Promise<boolean>
  /** The DELETE's 204 description: what removing one does. */
  readonly revoked: string
}

/**
 * GET {path} (every item not revoked, or a page of them), GET {path}/{id}
 * (one, which the create's Location names) and DELETE {path}/{id} (revoke or
 * delete), alike for keys, clients and webhook subscriptions.
 */
export function adminCollectionRoutes<T> (app: FastifyInstance, options: AdminCollection<T>): void {
  const { path, tag, noun, plural, singular, items, view, example } = options
  const listAnswer = adminPageHeaders(collectionPath(path.slice(1)), example)
  const itemAnswer = adminItemHeaders(example)
  const aNoun = `${/^[AEIOU]/i.test(noun) ? 'an' : 'a'} ${noun}`
  const itemProblems = problemResponses([400, 401, ADMIN_FORBIDDEN, { status: 404, error: noSuchItem(noun, EXAMPLE_ID) }, { status: 412, error: changedSince(noun) }, 429])
  const find = async ({ id }: { id: number }): Promise<object> => {
    const found = await items.get(id)
    if (found === undefined) throw noSuchItem(noun, id)
    return view(found)
  }
  app.get(path, {
    config: adminConfig,
    schema: adminOperation(tag, `list${plural}`, `List ${noun}s`, {
      querystring: adminPageQuery(options.maxLimit),
      headers: ADMIN_LIST_READ,
      response: {
        200: jsonResponse(`The ${noun}s that are not revoked, in id order: every one, or a page of them.`, Type.Array(Type.Ref(singular)), listAnswer),
        ...notModified(listAnswer),
        ...listProblems([400, 401, ADMIN_FORBIDDEN, 429])
      }
    })
  }, async function listAdminItems (request, reply) {
    return await sendAdminList(request, reply, async () => await adminPage(request, items, view))
  })
  app.get(`${path}/:id`, {
    config: adminConfig,
    schema: adminOperation(tag, `get${singular}`, `Get ${aNoun}`, {
      params: IdParams,
      headers: ADMIN_ITEM_READ,
      response: { 200: jsonResponse(`The ${noun}, without its secret; 404 once revoked.`, Type.Ref(singular), itemAnswer), ...notModified(itemAnswer), ...itemProblems }
    })
  }, async function getAdminItem (request, reply) {
    return await sendAdminItem(request, reply, noun, await find(request.params as { id: number }))
  })
  app.delete(`${path}/:id`, {
    config: adminConfig,
    schema: adminOperation(tag, `revoke${singular}`, `Revoke ${aNoun}`, {
      params: IdParams,
      headers: ADMIN_REMOVE,
      response: { 204: { description: options.revoked, type: 'null' }, ...itemProblems }
    })
  }, async function removeAdminItem (request, reply) {
    const { id } = request.params as { id: number }
    // Read first only when a condition needs what the client saw: a plain revocation stays one statement.
    if (request.headers['if-match'] !== undefined || request.headers['if-none-match'] !== undefined) checkBeforeRemoving(request, noun, await find({ id }))
    if (!await options.revoke(id)) throw noSuchItem(noun, id)
    return await reply.code(204).send()
  })
}
