/**
 * One 400 for every offending value. A route whose handler checks a request
 * beyond its schema (read-only values, sort keys, unknown scopes, event
 * names…) attaches the schema's errors (`attachValidation`) rather than
 * answering them, and refuses here with both: the schema's issues and its own.
 */
import type { FastifyRequest } from 'fastify'
import { annotate, invalid, type ProblemIssue } from '../errors.js'

/** Where Fastify says a schema failed. */
export type ValidatedPart = 'body' | 'querystring'

/** The body's members as a handler may read them after a failed schema: none unless it is an object. */
export function bodyMembers (request: FastifyRequest): Readonly<Record<string, unknown>> {
  const body = request.body
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? body as Record<string, unknown> : {}
}

/**
 * Throws the 400 that names the schema's issues and `issues` (found in
 * `part`) together; returns when there are neither. A schema that failed on
 * another part (a malformed id) is answered alone: `issues` were read from a
 * request whose other parts may not mean what they say.
 */
export function refuseWithAll (request: FastifyRequest, part: ValidatedPart, issues: readonly ProblemIssue[]): void {
  const error = request.validationError
  if (error !== undefined) throw error.validationContext === part ? annotate(error, { issues }) : error
  if (issues.length > 0) throw invalid(issues)
}
