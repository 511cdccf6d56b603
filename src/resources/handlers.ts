/**
 * The generic handlers every resource gets: list, get, create, replace,
 * update (merge patch) and remove, plus listing and creating through a
 * has-many relation. They speak only to the Store and know no resource.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { invalid } from '../errors.js'
import { bodyMembers, refuseWithAll } from '../http/attached-validation.js'
import { describeAjvErrors, type AjvError } from '../http/ajv-issues.js'
import { checkBeforeCreating, notModified } from '../http/conditional.js'
import { linkBase } from '../http/instance.js'
import { JSON_CONTENT_TYPE, JSON_MEDIA_TYPE } from '../http/json-body.js'
import { prefersMinimal } from '../http/prefer.js'
import type { StoredRecord } from '../store/store.js'
import type { CursorCodec } from './cursor.js'
import type { Condition } from './define.js'
import { readOnlyNames, schemaIds } from './derive.js'
import { itemPath, represent } from './links.js'
import { currentListTag, refuseInvalidQuery, sendList } from './list-handler.js'
import { mergedValuesCheck } from './merged-check.js'
import type { ChildLink, Model, Resource } from './model.js'
import { refuseHiddenParents, unknownParents } from './parent-visibility.js'
import { checkUnchanged, conditionally, load, type WriteTarget } from './preconditions.js'
import { recordAnswer, type RecordAnswer } from './record-answers.js'
import { stamped, visibility } from './visibility.js'
import { mergesObjects, patchedValues, pathParentIssues, readOnlyChanges, replacedValues, writableValues, type PathParent } from './writes.js'

type Body = Record<string, unknown>
/** What a write's body is checked against besides its schema. */
interface BodyChecks {
  /** The stored record, for read-only values sent back changed (PUT, PATCH). */
  readonly stored?: () => Promise<StoredRecord | undefined>
  /** The parent named by a related create's path. */
  readonly pathParent?: PathParent
}

/** A compiled body schema, as Fastify keeps one per media type. */
type BodyValidator = ((value: unknown) => boolean) & { errors?: AjvError[] | null }
type IdParams = { id: number }

/** The records a related path (`/v1/projects/7/tasks`) holds: those whose key names its parent. */
const relatedTo = (link: ChildLink, id: number): Condition[] => [{ field: link.foreignKey, op: 'eq', value: id }]

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

export interface HandlerOptions {
  readonly cursors: CursorCodec
  /** The schema digest of a resource, the first part of its records' ETags. */
  readonly epochOf: (resource: Resource) => string
}

export function resourceHandlers (model: Model, resource: Resource, { cursors, epochOf }: HandlerOptions): ResourceHandlers {
  const epoch = epochOf(resource)
  /** A record's writable values, as a create gives them all. */
  const storedValues = Type.Ref(schemaIds(resource).create)

  /** ETag and Last-Modified of a record's answer: what conditional requests compare with. */
  const validators = (reply: FastifyReply, { etag, lastModified }: RecordAnswer): FastifyReply => reply.header('etag', etag).header('last-modified', lastModified)

  /** 200 with the representation, or 204 (201 for creates) when the client prefers it minimal. */
  async function sendWritten (request: FastifyRequest, reply: FastifyReply, target: Resource, record: StoredRecord): Promise<unknown> {
    validators(reply, recordAnswer(target, epochOf(target), record))
    if (!prefersMinimal(request)) return await reply.send(represent(target, record))
    reply.header('preference-applied', 'return=minimal')
    return await (reply.statusCode === 201 ? reply : reply.code(204)).send()
  }

  async function insert (request: FastifyRequest, reply: FastifyReply, target: Resource, values: Body): Promise<unknown> {
    const key = request.idempotencyKey
    // A create under a key whose create committed already answers with that record.
    const record = key?.committed ?? await request.server.store.insert(target, stamped(request, target, values), key === null ? undefined : { idempotency: key.held })
    // Marked with the record in its transaction, the key answers its retries with it.
    if (key !== null) request.idempotencyKey = { held: key.held, committed: record }
    reply.code(201).header('location', itemPath(target.collection, record.id))
    return await sendWritten(request, reply, target, record)
  }

  /** 412 unless the create's preconditions hold on the collection it adds to: `target`'s records under `scope`. */
  async function checkCreate (request: FastifyRequest, reply: FastifyReply, target: Resource, scope: Condition[] = []): Promise<void> {
    await checkBeforeCreating(request.headers, linkBase(request.url), async () => await currentListTag(request, reply, target, scope, cursors))
  }

  const targetOf = (request: FastifyRequest): WriteTarget => ({ request, resource, id: (request.params as IdParams).id, epoch })

  /**
   * A body that failed its schema (the write routes attach validation errors
   * rather than answer them) is refused with every offending value: the
   * schema's, and those only the database can tell: a foreign key to a
   * missing row and, given the stored record, a read-only value changed. On a
   * related create, a foreign key that names another parent than the path's
   * is refused too, whether or not the schema found anything else.
   */
  async function refuseInvalidBody (request: FastifyRequest, target: Resource, { stored, pathParent }: BodyChecks = {}): Promise<void> {
    const error = request.validationError
    if (error === undefined) {
      const otherParent = pathParentIssues(bodyMembers(request), pathParent)
      if (otherParent.length > 0) throw invalid(otherParent)
      return
    }
    // A malformed id: nothing to look up.
    if (error.validationContext !== 'body') throw error
    const body = bodyMembers(request)
    // A foreign key the schema refused (a 0 below its minimum) is the schema's to name, not the lookup's too.
    const refused = new Set((error.validation as readonly AjvError[]).map(issue => issue.instancePath))
    const unrefused = Object.fromEntries(Object.entries(body).filter(([name]) => !refused.has(`/${name}`)))
    const otherParent = pathParentIssues(unrefused, pathParent)
    // The path's parent is looked up by the handler; a key naming another is refused just above, not looked up.
    if (pathParent !== undefined) delete unrefused[pathParent.foreignKey]
    const missing = await unknownParents(request, model, target, unrefused)
    const current = await stored?.()
    refuseWithAll(request, 'body', [...otherParent, ...missing, ...(current === undefined ? [] : readOnlyChanges(target, body, current))])
  }

  /**
   * A merge patch sent with no body at all. Its schema is chosen by media type
   * (merge patch or JSON), and with no Content-Type Fastify chose none, so
   * nothing refused it. It is refused as JSON's schema refuses a body that is
   * no object, in the same words.
   */
  function refuseMissingPatch (request: FastifyRequest): void {
    if (request.body !== undefined) return
    const validate = (request.getValidationFunction('body') as unknown as Record<string, BodyValidator | undefined>)[JSON_MEDIA_TYPE]
    if (validate === undefined || validate(null)) return
    throw invalid(describeAjvErrors(validate.errors ?? [], 'body', readOnlyNames(resource)))
  }

  /** Stores `values(current)` on the version read, under the request's preconditions. */
  async function save (request: FastifyRequest, reply: FastifyReply, values: (current: StoredRecord) => Body): Promise<unknown> {
    const target = targetOf(request)
    const where = visibility(request, resource)
    await refuseInvalidBody(request, resource, { stored: async () => await request.server.store.get(resource, target.id, { where }) })
    await refuseHiddenParents(request, model, resource, request.body as Body)
    const record = await conditionally(target, async check => await request.server.store.update(resource, target.id, current => {
      check(current)
      const changed = readOnlyChanges(resource, request.body as Body, current)
      if (changed.length > 0) throw invalid(changed)
      return values(current)
    }, { where }))
    return await sendWritten(request, reply, resource, record)
  }

  return {
    async list (request, reply) {
      refuseInvalidQuery(request, resource, cursors)
      return await sendList(request, reply, resource, [], cursors)
    },

    async get (request, reply) {
      const record = await load({ request, resource, id: (request.params as IdParams).id })
      const answer = recordAnswer(resource, epoch, record)
      checkUnchanged(resource, request.headers, answer.tag, record)
      validators(reply, answer)
      if (notModified(request.headers, answer.tag, record.updatedAt)) return await reply.code(304).send()
      return await reply.type(JSON_CONTENT_TYPE).send(answer.body(reply))
    },

    async create (request, reply) {
      await refuseInvalidBody(request, resource)
      await refuseHiddenParents(request, model, resource, request.body as Body)
      await checkCreate(request, reply, resource)
      return await insert(request, reply, resource, writableValues(resource, request.body as Body))
    },

    async replace (request, reply) {
      return await save(request, reply, current => replacedValues(resource, current, request.body as Body))
    },

    async update (request, reply) {
      refuseMissingPatch(request)
      // Read only once save() has refused a body that failed its schema: that body may be null.
      return await save(request, reply, current => {
        const patch = request.body as Body
        const values = patchedValues(resource, current, patch)
        if (mergesObjects(resource, patch)) mergedValuesCheck(request, storedValues)(values)
        return values
      })
    },

    async remove (request, reply) {
      const target = targetOf(request)
      await conditionally(target, async check => await request.server.store.remove(resource, target.id, check, { where: visibility(request, resource) }))
      return await reply.code(204).send()
    },

    listChildren (link: ChildLink): RouteHandlerMethod {
      const child = model.get(link.child)
      return async function listRelated (request, reply) {
        refuseInvalidQuery(request, child, cursors)
        const { id } = request.params as IdParams
        await load({ request, resource, id })
        return await sendList(request, reply, child, relatedTo(link, id), cursors)
      }
    },

    createChild (link: ChildLink): RouteHandlerMethod {
      const child = model.get(link.child)
      return async function createRelated (request, reply) {
        const { id } = request.params as IdParams
        const scope = relatedTo(link, id)
        await refuseInvalidBody(request, child, { pathParent: { foreignKey: link.foreignKey, id } })
        await load({ request, resource, id })
        // The path's parent is checked by load(); a child with other parents names them in its body.
        const { [link.foreignKey]: _fromPath, ...body } = request.body as Body
        await refuseHiddenParents(request, model, child, body)
        await checkCreate(request, reply, child, scope)
        return await insert(request, reply, child, { ...writableValues(child, body), [link.foreignKey]: id })
      }
    }
  }
}
