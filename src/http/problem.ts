/**
 * RFC 9457 problem details: the schema every error response follows and the
 * translation of any error, from any layer, into one. Internals of unexpected
 * errors never leave the process; the log keeps them under the request id.
 */
import { STATUS_CODES } from 'node:http'
import { Type, type Static } from '@sinclair/typebox'
import { annotationOf, catalogEntry, issuesSummary, PROBLEM_TYPE_PREFIX, type IssueLocation, type ProblemIssue } from '../errors.js'
import { stringEnum } from '../resources/model.js'
import { describeAjvErrors, type AjvError } from './ajv-issues.js'

export const PROBLEM_MEDIA_TYPE = 'application/problem+json'

export const Problem = Type.Object({
  type: Type.String({ description: 'URI identifying the kind of problem.' }),
  title: Type.String({ description: 'Short summary of the kind of problem.' }),
  status: Type.Integer({ description: 'The HTTP status code.' }),
  detail: Type.String({ description: 'What went wrong with this request.' }),
  instance: Type.String({ description: 'The path of the request.' }),
  requestId: Type.String({ description: 'Also in the X-Request-Id header and in the server log.' }),
  error: Type.Optional(Type.String({ description: 'OAuth 2.0 error code (RFC 6749 §5.2), on the token endpoint.' })),
  errors: Type.Optional(Type.Array(Type.Object({
    in: stringEnum<IssueLocation>(['body', 'query', 'path', 'header']),
    pointer: Type.String({ description: 'JSON Pointer to the offending value.' }),
    detail: Type.String()
  }, { additionalProperties: false }), { description: 'Every offending value, for validation problems.' }))
}, { $id: 'Problem', additionalProperties: false, description: 'An error, as RFC 9457 problem details.' })

export type Problem = Static<typeof Problem>

export interface ProblemAnswer {
  readonly status: number
  readonly body: Problem
  /** True when the error was not foreseen: it is logged in full at error level. */
  readonly unexpected: boolean
}

interface ErrorLike {
  code?: string
  statusCode?: number
  message?: string
  validation?: AjvError[]
  validationContext?: string
}

const LOCATIONS: Record<string, IssueLocation> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' }

const slugOf = (status: number): string =>
  (STATUS_CODES[status] ?? 'error').toLowerCase().replace(/[^a-z0-9]+/g, '-')

export interface ProblemContext {
  readonly instance: string
  readonly requestId: string
  /** Names a body may carry but never set, so that validation can call them read-only. */
  readonly readOnly?: readonly string[]
}

export function problemBody (status: number, detail: string, context: ProblemContext, kind?: { slug: string, title: string }, issues?: readonly ProblemIssue[], members?: Readonly<Record<string, string>>): Problem {
  return {
    type: `${PROBLEM_TYPE_PREFIX}${kind?.slug ?? slugOf(status)}`,
    title: kind?.title ?? STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    instance: context.instance,
    requestId: context.requestId,
    ...members,
    ...(issues === undefined ? {} : { errors: [...issues] })
  }
}

/**
 * The error Fastify makes of a failed schema, worded as Fastify's own but
 * without a stack: the problem is built from its issues, and a refusal never
 * logs one. Capturing it was 6 % of the CPU of a 400.
 */
export function schemaError (errors: ReadonlyArray<{ instancePath?: string, message?: string }>, dataVar: string): Error {
  const depth = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return new Error(errors.map(issue => `${dataVar}${issue.instancePath ?? ''} ${issue.message ?? ''}`).join(', '))
  } finally {
    Error.stackTraceLimit = depth
  }
}

export function toProblem (error: unknown, context: ProblemContext): ProblemAnswer {
  const err = (typeof error === 'object' && error !== null ? error : {}) as ErrorLike
  if (Array.isArray(err.validation)) {
    const where = LOCATIONS[err.validationContext ?? 'body'] ?? 'body'
    const issues = describeAjvErrors(err.validation, where, context.readOnly ?? [])
    // Issues only the handler can find (attached-validation.ts) join those the schema found, one per value.
    const more = (annotationOf(error).issues ?? []).filter(issue => !issues.some(found => found.pointer === issue.pointer))
    issues.push(...more)
    return { status: 400, body: problemBody(400, issuesSummary(issues, where), context, { slug: 'validation', title: 'Request is invalid' }, issues), unexpected: false }
  }
  const entry = catalogEntry(err.code)
  if (entry !== undefined) {
    const { issues, members } = annotationOf(error)
    return { status: entry.status, body: problemBody(entry.status, err.message ?? entry.title, context, entry, issues, members), unexpected: false }
  }
  // Fastify's own client errors (content type, body size, empty body…) carry safe messages.
  const status = err.statusCode
  if (typeof err.code === 'string' && err.code.startsWith('FST_') && status !== undefined && status >= 400 && status < 500) {
    return { status, body: problemBody(status, err.message ?? STATUS_CODES[status] ?? 'Error', context), unexpected: false }
  }
  return {
    status: 500,
    body: problemBody(500, `An unexpected error occurred. Quote request id ${context.requestId} when reporting it.`, context),
    unexpected: true
  }
}
