/**
 * Ownership: on a resource with an owner field, callers see and change only
 * their own records unless they hold admin, and create stamps their subject.
 * Applied as store conditions, so others' records behave as if they did not
 * exist: 404, and absent from lists, totals, filters and relations.
 *
 * A JWT without `sub` names nobody, so it can own nothing: it is refused
 * (401) where a subject is needed, rather than shown an always-empty
 * collection or allowed records that nobody could see again.
 */
import type { FastifyRequest } from 'fastify'
import { ADMIN_SCOPE } from '../auth/authenticate.js'
import { invalidToken } from '../auth/jwt.js'
import type { Condition } from './define.js'
import type { Resource } from './model.js'

function subjectOf (request: FastifyRequest, resource: Resource): string {
  const subject = request.principal?.subject
  if (subject === undefined) throw invalidToken(`the token has no sub, and ${resource.collection} belong to the subject that created them`)
  return subject
}

export function visibility (request: FastifyRequest, resource: Resource): Condition[] {
  const principal = request.principal
  if (resource.owner === undefined || principal === null || principal.scopes.has(ADMIN_SCOPE)) return []
  return [{ field: resource.owner, op: 'eq', value: subjectOf(request, resource) }]
}

export function stamped (request: FastifyRequest, resource: Resource, values: Record<string, unknown>): Record<string, unknown> {
  if (resource.owner === undefined || request.principal === null) return values
  return { ...values, [resource.owner]: subjectOf(request, resource) }
}
