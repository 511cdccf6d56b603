/**
 * Optimistic concurrency for writes. A write reads the record, checks
 * If-Match against its version, and stores only WHERE version is still the
 * one it read, so the check and the write are one atomic step: of N
 * concurrent writes carrying the same If-Match exactly one succeeds and the
 * rest get 412. A write without If-Match retries on a lost race instead, so
 * a merge patch is never applied to a stale read.
 */
import type { FastifyRequest } from 'fastify'
import type { IncomingHttpHeaders } from 'node:http'
import { PreconditionFailed, PreconditionRequired, ResourceNotFound } from '../errors.js'
import { noneMatch, preconditionFailed, recordTag, type EntityTag } from '../http/conditional.js'
import type { StoredRecord, WriteMiss } from '../store/store.js'
import type { Resource } from './model.js'
import { visibility } from './visibility.js'

/**
 * Only PostgreSQL writes can lose a race (SQLite reads and writes in one
 * transaction); of N writers racing on one record each round lands at least
 * one, so the bound only stops a livelock.
 */
const MAX_ATTEMPTS = 100

export interface WriteTarget {
  readonly request: FastifyRequest
  readonly resource: Resource
  readonly id: number
  /** The schema digest in this resource's ETags. */
  readonly epoch: string
}

export const notFound = (resource: Resource, id: number): Error => new ResourceNotFound(`no ${resource.singular} with id ${id}`)

/** 412: the record is no longer as the client's If-Match (or If-Unmodified-Since) said. */
export const changedSince = (resource: Resource, failed: 'if-match' | 'if-unmodified-since'): Error =>
  new PreconditionFailed(`the ${resource.singular} has changed since ${failed === 'if-match' ? 'that ETag' : 'the If-Unmodified-Since date'}; GET it again`)

/** 428: a write without If-Match to a resource whose definition requires it. */
export const ifMatchRequired = (resource: Resource): Error => new PreconditionRequired(`changing a ${resource.singular} needs If-Match with its current ETag`)

/** Reads the visible record, or 404. */
export async function load ({ request, resource, id }: Omit<WriteTarget, 'epoch'>): Promise<StoredRecord> {
  const record = await request.server.store.get(resource, id, { where: visibility(request, resource) })
  if (record === undefined) throw notFound(resource, id)
  return record
}

/** That the record is as the client last saw it, by If-Match or else If-Unmodified-Since, for a read or a write: 412 when not. */
export function checkUnchanged (resource: Resource, headers: IncomingHttpHeaders, tag: EntityTag, current: StoredRecord): void {
  const failed = preconditionFailed(headers, tag, current.updatedAt)
  if (failed !== undefined) throw changedSince(resource, failed)
}

/**
 * The request's preconditions on the record it changes, evaluated in RFC 9110
 * §13.2.2's order: If-Match (strong comparison), else If-Unmodified-Since;
 * then If-None-Match, which on a write fails when it matches (`*`: when the
 * record exists). Any that fails is a 412 and nothing changes.
 */
function precondition ({ request, resource, id, epoch }: WriteTarget): (current: StoredRecord) => void {
  const { headers } = request
  if (headers['if-match'] === undefined && resource.definition.requireIfMatch === true) {
    throw ifMatchRequired(resource)
  }
  return current => {
    const tag = recordTag(epoch, id, current.version)
    checkUnchanged(resource, headers, tag, current)
    if (noneMatch(headers['if-none-match'], tag) === true) {
      throw new PreconditionFailed(`If-None-Match names this ${resource.singular}'s current state (or is *, and it exists); nothing was changed`)
    }
  }
}

/**
 * Runs `write`, which reads the record, calls the check it is given on it and
 * stores only if the record is still the version read; repeats on a lost race
 * unless the request named the version it expects.
 */
export async function conditionally<T> (target: WriteTarget, write: (check: (current: StoredRecord) => void) => Promise<T | WriteMiss>): Promise<T> {
  const check = precondition(target)
  // `If-Match: *` only asks that the record exist, which a lost race does not change: retried like no If-Match.
  const ifMatch = target.request.headers['if-match']
  const conditional = ifMatch !== undefined && ifMatch.trim() !== '*'
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const result = await write(check)
    if (result === 'missing') throw notFound(target.resource, target.id)
    if (result !== 'raced') return result
    if (conditional) throw new PreconditionFailed(`the ${target.resource.singular} changed while this request was applied`)
  }
  throw new PreconditionFailed(`the ${target.resource.singular} kept changing; try again`)
}
