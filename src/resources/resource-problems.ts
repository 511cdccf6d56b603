/**
 * The problems a resource's operations answer beyond those every route
 * shares, for the OpenAPI document: each listed only where it can happen, and
 * shown as the service words it for this resource (made by the functions that
 * raise it). A client generated from the document then has no error case that
 * never occurs, and a reader of `/v1/tasks` sees examples about tasks.
 */
import { firstRequestRunning } from '../errors.js'
import { stillReferenced, uniqueClash } from '../store/store-errors.js'
import type { Model, Resource } from './model.js'
import { changedSince, ifMatchRequired, notFound } from './preconditions.js'
import { collectionPath } from './links.js'
import { EXAMPLE_ID } from './header-examples.js'
import type { ProblemDoc } from './problem-examples.js'
import { createPreconditionProblem } from './responses.js'

export interface ResourceProblems {
  /** 404 on a path under one of the resource's records: the record itself, or one of its related collections. */
  readonly notFound: ProblemDoc
  /** 412 of a record's GET or write. */
  readonly changed: ProblemDoc
  /** 412 of a create: its If-Match or If-None-Match failed on the collection. */
  readonly createPrecondition: ProblemDoc
  /** 409 of a create: a unique value taken, or an Idempotency-Key whose first request is still running. */
  readonly createConflict: ProblemDoc
  /** 409 of a PUT or PATCH: only where the resource has unique fields. */
  readonly updateConflict: ProblemDoc | undefined
  /** 409 of a DELETE: only where records that are not deleted with it can refer to it. */
  readonly deleteConflict: ProblemDoc | undefined
  /** 428 of a write: only where the definition requires If-Match. */
  readonly ifMatchRequired: ProblemDoc | undefined
}

/**
 * Whether deleting a record of `resource` can be refused: some relation to it
 * restricts deletes, directly or below a relation that cascades (the cascade
 * deletes those records, and a restriction on them refuses the whole delete).
 */
function deleteCanBeRefused (model: Model, resource: Resource, seen = new Set<string>()): boolean {
  if (seen.has(resource.collection)) return false
  seen.add(resource.collection)
  return resource.referrers.some(link => link.onDelete === 'restrict' || deleteCanBeRefused(model, model.get(link.child), seen))
}

export function resourceProblems (model: Model, resource: Resource): ResourceProblems {
  const name = resource.singular
  const unique = resource.definition.unique
  const taken = unique.length === 0 ? undefined : `Another ${name} already has this ${unique.join(' or ')}${resource.owner === undefined ? '' : ' (among the caller\'s own)'}`
  // What the service names in a refused delete: the collections related with a restriction, as a count of each.
  const holders = resource.referrers.filter(link => link.onDelete === 'restrict').map(link => `3 ${link.child}`)
  return {
    notFound: { status: 404, error: notFound(resource, EXAMPLE_ID), description: `No ${name} with this id, or none the caller may see.` },
    changed: { status: 412, error: changedSince(resource, 'if-match') },
    createPrecondition: createPreconditionProblem(collectionPath(resource.collection)),
    createConflict: taken === undefined
      ? { status: 409, error: firstRequestRunning(), description: 'A request with the same Idempotency-Key is still running.' }
      : { status: 409, error: uniqueClash(resource, unique[0]!), description: `${taken}, or a request with the same Idempotency-Key is still running.` },
    updateConflict: taken === undefined ? undefined : { status: 409, error: uniqueClash(resource, unique[0]!), description: `${taken}.` },
    deleteConflict: deleteCanBeRefused(model, resource)
      ? { status: 409, error: stillReferenced(resource, holders), description: `Records that are not deleted with the ${name} still refer to it; delete or move them first.` }
      : undefined,
    ifMatchRequired: resource.definition.requireIfMatch === true
      ? { status: 428, error: ifMatchRequired(resource), description: `Changing a ${name} needs If-Match with its current ETag.` }
      : undefined
  }
}
