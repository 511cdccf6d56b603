/**
 * Ownership: on a resource with an owner field, callers see and change only
 * their own records unless they hold admin, and create stamps their subject.
 * Applied as store conditions, so others' records behave as if they did not
 * exist: 404, and absent from lists, totals, filters and relations.
 */
import type { FastifyRequest } from 'fastify'
import { ADMIN_SCOPE } from '../auth/authenticate.js'
import type { Condition } from './define.js'
import type { Resource } from './model.js'

export function visibility (request: FastifyRequest, resource: Resource): Condition[] {
  const principal = request.principal
  if (resource.owner === undefined || principal === null || principal.scopes.has(ADMIN_SCOPE)) return []
  return [{ field: resource.owner, op: 'eq', value: principal.subject }]
}

export function stamped (request: FastifyRequest, resource: Resource, values: Record<string, unknown>): Record<string, unknown> {
  if (resource.owner === undefined || request.principal === null) return values
  return { ...values, [resource.owner]: request.principal.subject }
}
