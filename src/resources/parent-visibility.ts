/**
 * A foreign key to a parent with an owner must name one the caller can see.
 * The database knows every row: it let a caller attach a record to another
 * caller's parent, and told which ids exist (201 for one that does, 400 for
 * one that does not). A parent the caller cannot see gets the same 400 as a
 * missing one, whether the body is otherwise valid or not.
 */
import type { FastifyRequest } from 'fastify'
import { invalid, type ProblemIssue } from '../errors.js'
import { missingParentIssue } from '../store/store-errors.js'
import type { Model, Resource } from './model.js'
import { visibility } from './visibility.js'

type Values = Readonly<Record<string, unknown>>

/** The foreign keys of `values` that name an owned parent the caller cannot see (or none at all). */
async function hiddenParents (request: FastifyRequest, model: Model, resource: Resource, values: Values): Promise<ProblemIssue[]> {
  const issues: ProblemIssue[] = []
  for (const link of resource.parents) {
    const parent = model.get(link.parent)
    const where = visibility(request, parent)
    const id = values[link.foreignKey]
    if (where.length === 0 || typeof id !== 'number' || !Number.isSafeInteger(id)) continue
    if (await request.server.store.get(parent, id, { where }) === undefined) issues.push(missingParentIssue(link.foreignKey, parent, id))
  }
  return issues
}

/**
 * Every foreign key of `values` to a parent that is missing, or that the
 * caller cannot see: one issue each. A key to an owned parent is looked up
 * once, under the caller's visibility; the store looks up the others.
 */
export async function unknownParents (request: FastifyRequest, model: Model, resource: Resource, values: Values): Promise<ProblemIssue[]> {
  const owned = new Set(resource.parents.filter(link => visibility(request, model.get(link.parent)).length > 0).map(link => link.foreignKey))
  const others = Object.fromEntries(Object.entries(values).filter(([name]) => !owned.has(name)))
  return [...await hiddenParents(request, model, resource, values), ...await request.server.store.missingParents(resource, others)]
}

/** Refuses (400) a write whose foreign keys name an owned parent the caller cannot see. */
export async function refuseHiddenParents (request: FastifyRequest, model: Model, resource: Resource, values: Values): Promise<void> {
  const issues = await hiddenParents(request, model, resource, values)
  if (issues.length > 0) throw invalid(issues)
}
