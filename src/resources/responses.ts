/**
 * Response schemas of an operation, shared by the serializer and the OpenAPI
 * document: the success body and every problem the operation can answer.
 */
import { STATUS_CODES } from 'node:http'
import { Type, type TSchema } from '@sinclair/typebox'
import { PROBLEM_MEDIA_TYPE } from '../http/problem.js'

const WHEN: Record<number, string> = {
  400: 'The request is invalid: every offending value is named in `errors`.',
  401: 'No credential, an invalid one, or one without the needed scope (`WWW-Authenticate` says which).',
  403: 'A valid credential without the needed scope, when AUTHZ_DENIED_STATUS=403.',
  404: 'No such resource, or not visible to the caller.',
  409: 'A unique field is already taken, or the resource is still referenced.',
  413: 'The body is larger than the configured limit.',
  415: 'The body is not JSON (`Accept-Post` / `Accept-Patch` say what is accepted).',
  500: 'Unexpected error; the log has details under the request id.',
  503: 'The database is unreachable.'
}

const problem = Type.Ref('Problem')

export function problemResponses (statuses: readonly number[]): Record<number, unknown> {
  const responses: Record<number, unknown> = {}
  for (const status of [...statuses, 500, 503]) {
    responses[status] = {
      description: WHEN[status] ?? STATUS_CODES[status] ?? 'Error',
      content: { [PROBLEM_MEDIA_TYPE]: { schema: problem } }
    }
  }
  return responses
}

export function jsonResponse (description: string, schema: TSchema, headers?: Record<string, unknown>): unknown {
  return { description, ...(headers === undefined ? {} : { headers }), content: { 'application/json': { schema } } }
}
