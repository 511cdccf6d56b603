/**
 * The query string of a list → a store query. Validation of each parameter
 * happens in the route's querystring schema (strictly converted, unknown
 * parameters refused); this only assembles what it allows.
 */
import { Type, type TObject } from '@sinclair/typebox'
import type { ListQuery } from '../store/store.js'
import type { Resource } from './model.js'

export const DEFAULT_LIMIT = 20
export const DEFAULT_MAX_LIMIT = 100

export function listQuerySchema (maxLimit: number): TObject {
  return Type.Object({
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Page number, from 1.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, default: DEFAULT_LIMIT, description: `Items per page, 1 to ${maxLimit}.` }))
  }, { additionalProperties: false })
}

export function parseListQuery (_resource: Resource, query: Record<string, unknown>): ListQuery {
  const page = typeof query.page === 'number' ? query.page : 1
  const limit = typeof query.limit === 'number' ? query.limit : DEFAULT_LIMIT
  return { where: [], orderBy: [{ field: 'id', direction: 'asc' }], limit, offset: (page - 1) * limit }
}
