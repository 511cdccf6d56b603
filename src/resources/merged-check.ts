/**
 * JSON Merge Patch merges an object into the stored object (RFC 7396), and
 * the patch's schema sees only what was sent, not what the merge makes of
 * it: a union's variant given the members of another, or an object grown past
 * its `maxProperties`, passed that schema, was stored, and every later read
 * of the record then failed to serialize (500). A patch that merges an object
 * has its result checked against the record's schema before it is stored.
 */
import type { TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { invalid } from '../errors.js'
import { describeAjvErrors, UNKNOWN_PROPERTY, type AjvError } from '../http/ajv-issues.js'

type Values = Record<string, unknown>

/**
 * A stored member the merged object may not have (another variant's, when a
 * patch switches a union's variant) stays unless the patch removes it, which
 * a client may not think of: say how.
 */
const remedy = (detail: string): string => detail === UNKNOWN_PROPERTY ? '; a null for it in the patch removes it' : ''

/** A check that refuses (400, naming each value) merged values the schema of a whole record refuses. */
export function mergedValuesCheck (request: FastifyRequest, recordSchema: TSchema): (values: Values) => void {
  // Compiled once per schema by the app's validator compiler (validator.ts), with the shared schemas and formats of every route.
  const validate = request.compileValidationSchema(recordSchema, 'body')
  return function checkMerged (values) {
    if (validate(values) === true) return
    const issues = describeAjvErrors((validate.errors ?? []) as AjvError[], 'body', [])
    throw invalid(issues.map(issue => ({ ...issue, detail: `${issue.detail}, once the patch is merged into the stored value${remedy(issue.detail)}` })))
  }
}
