/**
 * The generic handlers every resource gets: list, get, create, replace,
 * update (merge patch) and remove, plus listing and creating through a
 * has-many relation. They speak only to the Store and know no resource.
 */
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { ADMIN_SCOPE } from '../auth/authenticate.js'
import { invalid, ResourceNotFound } from '../errors.js'
import type { Condition } from './define.js'
import type { CursorCodec } from './cursor.js'
import { cursorLinks, itemPath, pageLinks, represent } from './links.js'
import type { ChildLink, Model, Resource } from './model.js'
import { parseListQuery, positionOf, type ListRequest } from './query.js'
import { instanceOf } from '../http/instance.js'
import { patchedValues, readOnlyChanges, writableValues } from './writes.js'
import type { StoredRecord } from '../store/store.js'

type Body = Record<string, unknown>
type IdParams = { id: number }

export interface ResourceHandlers {
  list: RouteHandlerMethod
  get: RouteHandlerMethod
  create: RouteHandlerMethod
  replace: RouteHandlerMethod
  update: RouteHandlerMethod
  remove: RouteHandlerMethod
  listChildren (link: ChildLink): RouteHandlerMethod
  createChild (link: ChildLink): RouteHandlerMethod
}

/**
 * Conditions that limit what this caller may see and change: on an owned
 * resource, only their own records, unless they hold admin. Others' records
 * then behave as if they did not exist (404, absent from lists and totals).
 */
function visibility (request: FastifyRequest, resource: Resource): Condition[] {
  const principal = request.principal
  if (resource.owner === undefined || principal === null || principal.scopes.has(ADMIN_SCOPE)) return []
  return [{ field: resource.owner, op: 'eq', value: principal.subject }]
}

/** Create stamps the caller's subject into the owner field. */
function stamped (request: FastifyRequest, resource: Resource, values: Body): Body {
  if (resource.owner === undefined || request.principal === null) return values
  return { ...values, [resource.owner]: request.principal.subject }
}

function notFound (resource: Resource, id: number): Error {
  return new ResourceNotFound(`no ${resource.singular} with id ${id}`)
}

/** A sparse fieldset keeps id and links, and only the named fields. */
function pick (body: Record<string, unknown>, fields: readonly string[] | undefined): Record<string, unknown> {
  if (fields === undefined) return body
  const picked: Record<string, unknown> = { id: body.id, links: body.links }
  for (const name of fields) if (body[name] !== undefined) picked[name] = body[name]
  return picked
}

function searchOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? '' : url.slice(query + 1)
}

export function resourceHandlers (model: Model, resource: Resource, cursors: CursorCodec): ResourceHandlers {
  async function load (request: FastifyRequest, target: Resource, id: number): Promise<StoredRecord> {
    const record = await request.server.store.get(target, id, { where: visibility(request, target) })
    if (record === undefined) throw notFound(target, id)
    return record
  }

  async function sendList (request: FastifyRequest, reply: FastifyReply, target: Resource, scope: Condition[]): Promise<unknown> {
    const list: ListRequest = parseListQuery(target, request.query as Record<string, unknown>, { now: new Date(), cursors })
    const where = [...scope, ...visibility(request, target), ...list.store.where]
    const { store } = request.server
    const path = instanceOf(request.url).replace(/\/+$/, '')
    const search = searchOf(request.url)
    let records: StoredRecord[]
    if (list.mode === 'page') {
      const [page, total] = await Promise.all([store.list(target, { ...list.store, where }), store.count(target, where)])
      records = page
      reply.header('x-total-count', total).header('link', pageLinks(path, search, list.page, list.limit, total))
    } else {
      const window = await store.list(target, { ...list.store, where })
      records = window.slice(0, list.limit)
      const last = records.at(-1)
      const next = window.length > list.limit && last !== undefined
        ? cursors.encode({ sort: list.sort, values: positionOf(last, list.store.orderBy) })
        : undefined
      reply.header('link', cursorLinks(path, search, next))
    }
    return await reply.send(records.map(record => pick(represent(target, record), list.fields)))
  }

  async function insert (request: FastifyRequest, reply: FastifyReply, target: Resource, values: Body): Promise<unknown> {
    const record = await request.server.store.insert(target, stamped(request, target, values))
    return await reply.code(201).header('location', itemPath(target.collection, record.id)).send(represent(target, record))
  }

  async function save (request: FastifyRequest, reply: FastifyReply, id: number, values: Body): Promise<unknown> {
    const record = await request.server.store.update(resource, id, values, { where: visibility(request, resource) })
    if (record === undefined) throw notFound(resource, id)
    return await reply.send(represent(resource, record))
  }

  return {
    async list (request, reply) {
      return await sendList(request, reply, resource, [])
    },

    async get (request, reply) {
      const { id } = request.params as IdParams
      return await reply.send(represent(resource, await load(request, resource, id)))
    },

    async create (request, reply) {
      return await insert(request, reply, resource, writableValues(resource, request.body as Body))
    },

    async replace (request, reply) {
      const { id } = request.params as IdParams
      const body = request.body as Body
      const current = await load(request, resource, id)
      const changed = readOnlyChanges(resource, body, current)
      if (changed.length > 0) throw invalid(changed)
      return await save(request, reply, id, writableValues(resource, body))
    },

    async update (request, reply) {
      const { id } = request.params as IdParams
      const patch = request.body as Body
      const current = await load(request, resource, id)
      const changed = readOnlyChanges(resource, patch, current)
      if (changed.length > 0) throw invalid(changed)
      return await save(request, reply, id, patchedValues(resource, current, patch))
    },

    async remove (request, reply) {
      const { id } = request.params as IdParams
      const removed = await request.server.store.remove(resource, id, { where: visibility(request, resource) })
      if (!removed) throw notFound(resource, id)
      return await reply.code(204).send()
    },

    listChildren (link: ChildLink): RouteHandlerMethod {
      const child = model.get(link.child)
      return async function listRelated (request, reply) {
        const { id } = request.params as IdParams
        await load(request, resource, id)
        return await sendList(request, reply, child, [{ field: link.foreignKey, op: 'eq', value: id }])
      }
    },

    createChild (link: ChildLink): RouteHandlerMethod {
      const child = model.get(link.child)
      return async function createRelated (request, reply) {
        const { id } = request.params as IdParams
        await load(request, resource, id)
        return await insert(request, reply, child, { ...writableValues(child, request.body as Body), [link.foreignKey]: id })
      }
    }
  }
}
