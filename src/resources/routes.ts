/**
 * One encapsulated plugin per resource: registers its routes with schemas
 * derived from the definition, so validation, serialization and the OpenAPI
 * document all read the same source.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { scopeNote, securityFor } from '../auth/openapi-security.js'
import { JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE } from '../http/json-body.js'
import type { CursorCodec } from './cursor.js'
import { deprecationHeaderDocs, deprecationHeaders } from './deprecation.js'
import { IdParams, nestedCreateId, pageSchema, readOnlyNames, representationExample, schemaIds } from './derive.js'
import { resourceHandlers } from './handlers.js'
import { collectionPath, itemPath } from './links.js'
import { pascal, type Model, type Resource } from './model.js'
import { EXAMPLE_ID } from './header-examples.js'
import { scopeProblem } from './problem-examples.js'
import { listQuerySchema } from './query-schema.js'
import { resourceProblems } from './resource-problems.js'
import { CONDITIONAL_LIST_READ, CONDITIONAL_RECORD_READ, CONDITIONAL_WRITE, CREATE_HEADERS, createdHeaders, createPreconditionProblem, jsonResponse, listHeaders, listProblems, minimalHeaders, notModified, problemResponses, recordHeaders, withHeaders } from './responses.js'

export interface ResourceRoutesOptions {
  readonly model: Model
  readonly resource: Resource
  readonly maxLimit: number
  readonly cursors: CursorCodec
  /** The schema digest of a resource, the first part of its records' ETags. */
  readonly epochOf: (resource: Resource) => string
}

/** A change's 204 for `Prefer: return=minimal`, on a resource whose ETags begin with `epoch`. */
const minimal = (epoch: string) => ({ 204: { description: 'Stored; no body because the request had `Prefer: return=minimal`.', type: 'null', headers: minimalHeaders(epoch) } })

/** The items of the example page of `resource`'s lists: its example record, if it has one. */
const examplePage = (resource: Resource): unknown[] => [representationExample(resource)].filter(item => item !== undefined)

type RouteSpec = Omit<RouteOptions, 'schema'> & { schema: Record<string, unknown> }

export async function resourceRoutes (app: FastifyInstance, { model, resource, maxLimit, cursors, epochOf }: ResourceRoutesOptions): Promise<void> {
  const handlers = resourceHandlers(model, resource, { cursors, epochOf })
  const ids = schemaIds(resource)
  const one = Type.Ref(ids.representation)
  const many = pageSchema(resource)
  const name = resource.singular
  const readOnly = readOnlyNames(resource)
  const tags = [resource.collection]
  const problems = resourceProblems(model, resource)
  const epoch = epochOf(resource)
  const listPath = collectionPath(resource.collection)
  const listAnswer = listHeaders(listPath, examplePage(resource))
  const record = recordHeaders(epoch)

  /**
   * A route answers for `target`: the resource itself, or on a related path
   * (`/v1/projects/7/tasks`) the child whose records it holds. Its scope
   * (`{collection}:read` for GET, `:write` otherwise) and a read's cache
   * policy are the target's; it is deprecated when the target or the
   * resource its path is under is.
   */
  const route = (target: Resource, options: RouteSpec): void => {
    const reading = options.method === 'GET'
    const scope = `${target.collection}:${reading ? 'read' : 'write'}`
    const maxAge = target.definition.cache?.maxAge
    const readCache = maxAge === undefined ? 'private, no-cache' : `private, max-age=${maxAge}`
    const headers = deprecationHeaders(...(target === resource ? [resource] : [resource, target]).map(answering => answering.definition.deprecated))
    const deprecated = headers !== undefined
    app.route({
      ...options,
      config: { ...options.config, scope, ...(reading ? { cacheControl: readCache } : {}), ...(headers === undefined ? {} : { pathHeaders: headers }) },
      schema: {
        tags,
        ...(deprecated ? { deprecated: true } : {}),
        security: securityFor(scope),
        ...options.schema,
        description: `${String(options.schema.summary)}. ${scopeNote(scope)}${deprecated ? ' Deprecated.' : ''}`,
        response: withHeaders({ ...(options.schema.response as Record<string, unknown>), ...problemResponses([401, scopeProblem(scope), 406, 414, 429]) }, deprecationHeaderDocs(headers))
      }
    })
  }
  // A record's strong ETag must not outlive a change of content-coding, so single records are sent uncompressed.
  // A route option: @fastify/compress 9 no longer reads it from `config`.
  const single = { compress: false as const }

  route(resource, {
    method: 'GET',
    url: '/',
    handler: handlers.list,
    // The handler adds what the schema cannot check (sort keys, filters…) to its issues.
    attachValidation: true,
    schema: {
      operationId: `list${resource.pluralTypeName}`,
      summary: `List ${resource.collection}`,
      querystring: listQuerySchema(resource, maxLimit),
      headers: CONDITIONAL_LIST_READ,
      response: { 200: jsonResponse(`A page of ${resource.collection}.`, many, listAnswer), ...notModified(listAnswer), ...listProblems([400]) }
    }
  })
  route(resource, {
    method: 'POST',
    url: '/',
    handler: handlers.create,
    // The handler adds foreign keys to missing rows to the schema's issues.
    attachValidation: true,
    ...single,
    config: { readOnly, accepts: [JSON_MEDIA_TYPE], idempotent: true },
    schema: {
      operationId: `create${resource.typeName}`,
      summary: `Create a ${name}`,
      headers: CREATE_HEADERS,
      body: Type.Ref(ids.create),
      response: { 201: jsonResponse(`The created ${name} (no body with \`Prefer: return=minimal\`).`, one, createdHeaders(itemPath(resource.collection, EXAMPLE_ID), epoch)), ...problemResponses([400, problems.createConflict, problems.createPrecondition, 413, 415, 422]) }
    }
  })
  route(resource, {
    method: 'GET',
    url: '/:id',
    handler: handlers.get,
    ...single,
    schema: {
      operationId: `get${resource.typeName}`,
      summary: `Get a ${name}`,
      params: IdParams,
      headers: CONDITIONAL_RECORD_READ,
      response: { 200: jsonResponse(`The ${name}.`, one, record), ...notModified(record), ...problemResponses([400, problems.notFound, problems.changed]) }
    }
  })
  route(resource, {
    method: 'PUT',
    url: '/:id',
    handler: handlers.replace,
    // The handler adds foreign keys to missing rows and changed read-only values to the schema's issues.
    attachValidation: true,
    ...single,
    config: { readOnly, accepts: [JSON_MEDIA_TYPE] },
    schema: {
      operationId: `replace${resource.typeName}`,
      summary: `Replace a ${name}`,
      params: IdParams,
      headers: CONDITIONAL_WRITE,
      body: Type.Ref(ids.replace),
      response: { 200: jsonResponse(`The ${name} as stored.`, one, record), ...minimal(epoch), ...problemResponses([400, problems.notFound, problems.updateConflict, problems.changed, 413, 415, problems.ifMatchRequired]) }
    }
  })
  route(resource, {
    method: 'PATCH',
    url: '/:id',
    handler: handlers.update,
    // The handler adds foreign keys to missing rows and changed read-only values to the schema's issues.
    attachValidation: true,
    ...single,
    config: { readOnly, accepts: [MERGE_PATCH_MEDIA_TYPE, JSON_MEDIA_TYPE] },
    schema: {
      operationId: `update${resource.typeName}`,
      summary: `Update a ${name} (JSON Merge Patch)`,
      params: IdParams,
      headers: CONDITIONAL_WRITE,
      body: { content: { [MERGE_PATCH_MEDIA_TYPE]: { schema: Type.Ref(ids.patch) }, [JSON_MEDIA_TYPE]: { schema: Type.Ref(ids.patch) } } },
      response: { 200: jsonResponse(`The ${name} as stored.`, one, record), ...minimal(epoch), ...problemResponses([400, problems.notFound, problems.updateConflict, problems.changed, 413, 415, problems.ifMatchRequired]) }
    }
  })
  route(resource, {
    method: 'DELETE',
    url: '/:id',
    handler: handlers.remove,
    schema: {
      operationId: `delete${resource.typeName}`,
      summary: `Delete a ${name}`,
      params: IdParams,
      headers: CONDITIONAL_WRITE,
      response: { 204: { description: deletedWith(resource), type: 'null' }, ...problemResponses([400, problems.notFound, problems.deleteConflict, problems.changed, problems.ifMatchRequired]) }
    }
  })

  for (const link of resource.children) {
    const child = model.get(link.child)
    const childIds = schemaIds(child)
    const childProblems = resourceProblems(model, child)
    // Operations are named by parent and child; by the relation where two relations reach the same child.
    const named = resource.children.filter(other => other.child === link.child).length > 1 ? pascal(link.name) : ''
    const relation = named === '' ? `${resource.typeName}${child.pluralTypeName}` : `${resource.typeName}${named}`
    const relatedPath = `${itemPath(resource.collection, EXAMPLE_ID)}/${link.name}`
    const relatedList = listHeaders(relatedPath, examplePage(child))
    route(child, {
      method: 'GET',
      url: `/:id/${link.name}`,
      handler: handlers.listChildren(link),
      attachValidation: true,
      schema: {
        operationId: `list${relation}`,
        summary: `List the ${link.name} of a ${name}`,
        params: IdParams,
        querystring: listQuerySchema(child, maxLimit),
        headers: CONDITIONAL_LIST_READ,
        response: { 200: jsonResponse(`A page of the ${name}'s ${link.name}.`, pageSchema(child), relatedList), ...notModified(relatedList), ...listProblems([400, problems.notFound]) }
      }
    })
    route(child, {
      method: 'POST',
      url: `/:id/${link.name}`,
      handler: handlers.createChild(link),
      attachValidation: true,
      ...single,
      config: { readOnly: readOnlyNames(child), accepts: [JSON_MEDIA_TYPE], idempotent: true },
      schema: {
        operationId: `create${resource.typeName}${named}${child.typeName}`,
        summary: `Create a ${child.singular} in a ${name}`,
        params: IdParams,
        headers: CREATE_HEADERS,
        body: Type.Ref(nestedCreateId(child, resource, link.foreignKey)),
        response: { 201: jsonResponse(`The created ${child.singular}.`, Type.Ref(childIds.representation), createdHeaders(itemPath(child.collection, EXAMPLE_ID), epochOf(child))), ...problemResponses([400, problems.notFound, childProblems.createConflict, createPreconditionProblem(relatedPath), 413, 415, 422]) }
      }
    })
  }
}

/** A delete's 204, saying which records go with it: those whose relation to it cascades. */
function deletedWith (resource: Resource): string {
  const cascading = new Set(resource.referrers.filter(link => link.onDelete === 'cascade').map(link => link.child))
  return cascading.size === 0 ? 'Deleted.' : `Deleted, together with the ${[...cascading].join(' and ')} that refer to it.`
}

export function resourcePrefix (resource: Resource): string {
  return collectionPath(resource.collection)
}
