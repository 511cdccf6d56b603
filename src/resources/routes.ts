/**
 * One encapsulated plugin per resource: registers its routes with schemas
 * derived from the definition, so validation, serialization and the OpenAPI
 * document all read the same source.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { securityFor } from '../auth/openapi-security.js'
import { JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE } from '../http/json-body.js'
import { Id, nestedCreateId, readOnlyNames, schemaIds } from './derive.js'
import { resourceHandlers } from './handlers.js'
import { collectionPath } from './links.js'
import type { Model, Resource } from './model.js'
import type { CursorCodec } from './cursor.js'
import { listQuerySchema } from './query-schema.js'
import { jsonResponse, problemResponses } from './responses.js'

export interface ResourceRoutesOptions {
  readonly model: Model
  readonly resource: Resource
  readonly maxLimit: number
  readonly cursors: CursorCodec
}

const IdParams = Type.Object({ id: Id }, { additionalProperties: false })
const LOCATION = { Location: { type: 'string', description: 'Path of the created resource.' } }
const LIST_HEADERS = {
  'X-Total-Count': { type: 'integer', description: 'Matching items in all pages (page-based requests only).' },
  Link: { type: 'string', description: 'RFC 8288 links to the first, prev, next and last pages, as they apply; with `cursor`, first and next.' }
}

export async function resourceRoutes (app: FastifyInstance, { model, resource, maxLimit, cursors }: ResourceRoutesOptions): Promise<void> {
  const handlers = resourceHandlers(model, resource, cursors)
  const ids = schemaIds(resource)
  const one = Type.Ref(ids.representation)
  const many = Type.Array(Type.Ref(ids.sparse))
  const name = resource.singular
  const deprecated = resource.definition.deprecated !== undefined && resource.definition.deprecated !== false
  const readOnly = readOnlyNames(resource)
  const tags = [resource.collection]

  /** Every route needs `{collection}:read` for GET and `{collection}:write` otherwise. */
  const route = (target: Resource, options: Omit<RouteOptions, 'schema'> & { schema: Record<string, unknown> }): void => {
    const scope = `${target.collection}:${options.method === 'GET' ? 'read' : 'write'}`
    const errors = problemResponses([401, 403])
    app.route({
      ...options,
      config: { ...options.config, scope },
      schema: {
        tags,
        ...(deprecated ? { deprecated: true } : {}),
        security: securityFor(scope),
        ...options.schema,
        response: { ...(options.schema.response as Record<string, unknown>), ...errors }
      }
    })
  }

  route(resource, {
    method: 'GET',
    url: '/',
    handler: handlers.list,
    schema: {
      operationId: `list${resource.pluralTypeName}`,
      summary: `List ${resource.collection}`,
      querystring: listQuerySchema(resource, maxLimit),
      response: { 200: jsonResponse(`A page of ${resource.collection}.`, many, LIST_HEADERS), ...problemResponses([400]) }
    }
  })
  route(resource, {
    method: 'POST',
    url: '/',
    handler: handlers.create,
    config: { readOnly, accepts: [JSON_MEDIA_TYPE] },
    schema: {
      operationId: `create${resource.typeName}`,
      summary: `Create a ${name}`,
      body: Type.Ref(ids.create),
      response: { 201: jsonResponse(`The created ${name}.`, one, LOCATION), ...problemResponses([400, 409, 413, 415]) }
    }
  })
  route(resource, {
    method: 'GET',
    url: '/:id',
    handler: handlers.get,
    schema: {
      operationId: `get${resource.typeName}`,
      summary: `Get a ${name}`,
      params: IdParams,
      response: { 200: jsonResponse(`The ${name}.`, one), ...problemResponses([400, 404]) }
    }
  })
  route(resource, {
    method: 'PUT',
    url: '/:id',
    handler: handlers.replace,
    config: { readOnly, accepts: [JSON_MEDIA_TYPE] },
    schema: {
      operationId: `replace${resource.typeName}`,
      summary: `Replace a ${name}`,
      params: IdParams,
      body: Type.Ref(ids.replace),
      response: { 200: jsonResponse(`The ${name} as stored.`, one), ...problemResponses([400, 404, 409, 413, 415]) }
    }
  })
  route(resource, {
    method: 'PATCH',
    url: '/:id',
    handler: handlers.update,
    config: { readOnly, accepts: [MERGE_PATCH_MEDIA_TYPE, JSON_MEDIA_TYPE] },
    schema: {
      operationId: `update${resource.typeName}`,
      summary: `Update a ${name} (JSON Merge Patch)`,
      params: IdParams,
      body: { content: { [MERGE_PATCH_MEDIA_TYPE]: { schema: Type.Ref(ids.patch) }, [JSON_MEDIA_TYPE]: { schema: Type.Ref(ids.patch) } } },
      response: { 200: jsonResponse(`The ${name} as stored.`, one), ...problemResponses([400, 404, 409, 413, 415]) }
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
      response: { 204: { description: 'Deleted.', type: 'null' }, ...problemResponses([400, 404, 409]) }
    }
  })

  for (const link of resource.children) {
    const child = model.get(link.child)
    const childIds = schemaIds(child)
    const childOne = Type.Ref(childIds.representation)
    const relation = `${resource.typeName}${child.pluralTypeName}`
    route(child, {
      method: 'GET',
      url: `/:id/${link.name}`,
      handler: handlers.listChildren(link),
      schema: {
        operationId: `list${relation}`,
        summary: `List the ${link.name} of a ${name}`,
        params: IdParams,
        querystring: listQuerySchema(child, maxLimit),
        response: { 200: jsonResponse(`A page of the ${name}'s ${link.name}.`, Type.Array(Type.Ref(childIds.sparse)), LIST_HEADERS), ...problemResponses([400, 404]) }
      }
    })
    route(child, {
      method: 'POST',
      url: `/:id/${link.name}`,
      handler: handlers.createChild(link),
      config: { readOnly: readOnlyNames(child), accepts: [JSON_MEDIA_TYPE] },
      schema: {
        operationId: `create${resource.typeName}${child.typeName}`,
        summary: `Create a ${child.singular} in a ${name}`,
        params: IdParams,
        body: Type.Ref(nestedCreateId(child, model.get(resource.collection))),
        response: { 201: jsonResponse(`The created ${child.singular}.`, childOne, LOCATION), ...problemResponses([400, 404, 409, 413, 415]) }
      }
    })
  }
}

export function resourcePrefix (resource: Resource): string {
  return collectionPath(resource.collection)
}
