/**
 * Response schemas of an operation, shared by the serializer and the OpenAPI
 * document: the success body and every problem the operation can answer.
 */
import { STATUS_CODES } from 'node:http'
import { Type, type TSchema } from '@sinclair/typebox'
import { PROBLEM_MEDIA_TYPE } from '../http/problem.js'
import { REQUEST_CODINGS } from '../http/request-coding.js'
import { createPreconditionFailed, listIfMatchFailed, noRepresentationToMatch } from '../http/conditional.js'
import { DEFAULT_RATE_LIMIT, EXAMPLE_TOTAL, LAST_MODIFIED_EXAMPLE, pageLinksExample, pageTagExample, rateLimitExample, recordTagExample, UNAVAILABLE_RETRY_AFTER_EXAMPLE, type RateLimitSetting } from './header-examples.js'
import { exampleOf, problemExample, type ProblemDoc } from './problem-examples.js'

/** The codings a request body may come in, as a sentence names them: `gzip, deflate or br`. */
const READ_CODINGS = `${REQUEST_CODINGS.slice(0, -1).join(', ')} or ${REQUEST_CODINGS.at(-1)!}`

const WHEN: Record<number, string> = {
  400: 'The request is invalid: every offending value is named in `errors`.',
  401: 'No credential, an invalid one, or one without the needed scope (`WWW-Authenticate` says which).',
  403: 'A valid credential without the needed scope, when AUTHZ_DENIED_STATUS=403.',
  404: 'No such resource, or not visible to the caller.',
  406: 'The Accept header does not allow application/json, the media type of this answer (errors are application/problem+json).',
  409: 'A unique field is already taken, the resource is still referenced, or a request with the same Idempotency-Key is still running.',
  412: 'A precondition failed, and nothing was changed: If-Match names no current ETag, or the resource changed after If-Unmodified-Since, or If-None-Match names its current ETag (`*`: it exists).',
  413: 'The body is larger than the configured limit.',
  414: 'The query string is longer than 4096 characters, a path segment longer than 1000, or the request line longer than 16 KiB.',
  415: `The body is not JSON (\`Accept-Post\` / \`Accept-Patch\` say what is accepted), or its Content-Encoding is not ${READ_CODINGS} (\`Accept-Encoding\` says so).`,
  422: 'The Idempotency-Key was already used with a different request.',
  428: 'This resource requires If-Match on writes.',
  429: 'Too many requests from this credential (or IP, before authentication); `Retry-After` says when to retry.',
  500: 'Unexpected error; the log has details under the request id.',
  503: 'The database is unreachable, the issuer of a JWT could not be reached for the key that verifies it, or this process is shutting down (the request came on a connection it then closes); `Retry-After` says when to retry.'
}

const problem = Type.Ref('Problem')

/**
 * A documented response header, with an example of its value as the service
 * sends it (header-examples.ts). `required` is OpenAPI's mark on a header
 * object (every answer of that status carries it) and `shared` puts it in the
 * document's components; they and the example are written on the route's
 * header schema because @fastify/swagger copies nothing else from there, and
 * document-headers.ts moves them where OpenAPI reads them.
 */
export interface HeaderDoc { readonly type: 'string' | 'integer', readonly description: string, readonly example: string | number, readonly required?: true, readonly shared?: true }
/** A header every answer of its status carries: clients may count on it. */
export const header = (type: HeaderDoc['type'], description: string, example: string | number): HeaderDoc => ({ type, description, example, required: true })
/** A header only some answers of its status carry; `description` says which. */
export const optionalHeader = (type: HeaderDoc['type'], description: string, example: string | number): HeaderDoc => ({ type, description, example })
/** A required header described the same on every answer that has it: once in the document, referred to by its name. */
export const sharedHeader = (type: HeaderDoc['type'], description: string, example: string | number): HeaderDoc => ({ ...header(type, description, example), shared: true })
const RETRY_AFTER_DESCRIPTION = 'Seconds until a request may succeed again.'
/** A 503's wait is the same on every route, so it is written once (a 429's is the route's: rateLimitHeaders). */
const UNAVAILABLE_RETRY_AFTER = { 'Retry-After': sharedHeader('integer', RETRY_AFTER_DESCRIPTION, UNAVAILABLE_RETRY_AFTER_EXAMPLE) }

/**
 * The problem responses of an operation: each status with its common
 * description and example, or as a ProblemDoc gives it (`undefined`: a problem
 * this operation cannot answer), then 500 and 503, which any can.
 */
export function problemResponses (problems: ReadonlyArray<number | ProblemDoc | undefined>): Record<number, unknown> {
  const responses: Record<number, unknown> = {}
  for (const entry of [...problems, 500, 503]) {
    if (entry === undefined) continue
    const status = typeof entry === 'number' ? entry : entry.status
    responses[status] = {
      description: (typeof entry === 'number' ? undefined : entry.description) ?? WHEN[status] ?? STATUS_CODES[status] ?? 'Error',
      ...(status === 503 ? { headers: UNAVAILABLE_RETRY_AFTER } : {}),
      content: { [PROBLEM_MEDIA_TYPE]: { schema: problem, example: typeof entry === 'number' ? problemExample(status) : exampleOf(entry.error) } }
    }
  }
  return responses
}

const FAILING_OPEN = ' Absent while the Redis counters are unreachable (limits fail open).'

/**
 * The rate limiter's headers on the answers of a route limited by `setting`.
 * A 429 is the limiter's own answer, which always has them (it was counted)
 * and says when to retry. Any other answer has them except while the shared
 * counters (REDIS_URL) cannot be reached, when limits fail open and nothing
 * was counted (rate-limit.ts).
 */
export function rateLimitHeaders (setting: RateLimitSetting, refused: boolean): Record<string, HeaderDoc> {
  const make = refused ? header : optionalHeader
  const note = refused ? '' : FAILING_OPEN
  const example = rateLimitExample(setting, refused)
  return {
    'X-RateLimit-Limit': make('integer', `Requests allowed in the window.${note}`, example.limit),
    'X-RateLimit-Remaining': make('integer', `Requests left in the window.${note}`, example.remaining),
    'X-RateLimit-Reset': make('integer', `Seconds until the window resets.${note}`, example.reset),
    'RateLimit-Policy': make('string', `IETF draft: \`"default";q=<limit>;w=<window seconds>\`.${note}`, example.policy),
    RateLimit: make('string', `IETF draft: \`"default";r=<remaining>;t=<seconds to reset>\`.${note}`, example.fields),
    ...(refused ? { 'Retry-After': header('integer', RETRY_AFTER_DESCRIPTION, example.reset) } : {})
  }
}

/** The rate limiter's headers, as a response carries them (Retry-After only on a 429): read off their documentation, so the two agree. */
export const RATE_LIMIT_HEADER_NAMES = Object.keys(rateLimitHeaders(DEFAULT_RATE_LIMIT, false)).map(name => name.toLowerCase())

/** A list's problems: `problems`, and the 412 of an If-Match its weak tag cannot satisfy, shown as the list answers it. */
export const listProblems = (problems: ReadonlyArray<number | ProblemDoc>): Record<string, unknown> => problemResponses([...problems, { status: 412, error: listIfMatchFailed() }])

/** A 304 carries the headers its 200 would have had, but no body (RFC 9110 §15.4.5). */
export const notModified = (headers: Record<string, unknown>) => ({ 304: { description: 'Not modified: the copy the client holds is current (no body).', type: 'null', headers } })

/** The Location of a 201, shown as the path of the created example, `path`. */
export const locationHeader = (path: string): Record<string, HeaderDoc> => ({ Location: header('string', 'Path of the created resource.', path) })
/** What a record's answers carry, read or written: its validators, shown for a resource whose ETags begin with `epoch`. */
export const recordHeaders = (epoch: string): Record<string, HeaderDoc> => ({
  ETag: header('string', 'Strong entity tag of the record; send it in If-Match to change it safely, or If-None-Match to revalidate.', recordTagExample(epoch)),
  'Last-Modified': header('string', 'When the record last changed (HTTP date).', LAST_MODIFIED_EXAMPLE)
})
const PREFERENCE_APPLIED = { 'Preference-Applied': optionalHeader('string', '`return=minimal` when the request\'s `Prefer: return=minimal` was honoured (RFC 7240).', 'return=minimal') }
/** A create's 201: where the record is, and its validators. */
export const createdHeaders = (location: string, epoch: string): Record<string, HeaderDoc> => ({ ...locationHeader(location), ...recordHeaders(epoch), ...PREFERENCE_APPLIED })
/** A change's 204, answering `Prefer: return=minimal`. */
export const minimalHeaders = (epoch: string): Record<string, HeaderDoc> => ({ ...recordHeaders(epoch), ...PREFERENCE_APPLIED })
/** A resource list's answer, shown for the list at `path` whose page holds `items`. */
export const listHeaders = (path: string, items: readonly unknown[]): Record<string, HeaderDoc> => ({
  'X-Total-Count': optionalHeader('integer', 'Matching items in all pages (page-based requests only).', EXAMPLE_TOTAL),
  Link: header('string', 'RFC 8288 links to the first, prev, next and last pages, as they apply; with `cursor`, first and next.', pageLinksExample(path)),
  ETag: header('string', 'Weak entity tag of this page: it changes with its records and with its X-Total-Count (or, for a cursor page, whether a next page exists). Send it in If-None-Match to revalidate.', pageTagExample(items))
})

/** Request headers, as documented parameters (names are case-insensitive). */
const IF_NONE_MATCH_READ = { 'If-None-Match': Type.Optional(Type.String({ description: 'ETags the client holds: 304 when one is current.' })) }
const CONDITIONAL_READ = {
  ...IF_NONE_MATCH_READ,
  'If-Modified-Since': Type.Optional(Type.String({ description: 'HTTP date: 304 when not modified since (ignored with If-None-Match).' }))
}
/** A list's GET also answers If-Match, which its weak ETag can never satisfy (RFC 9110 §13.1.1). */
const IF_MATCH_LIST = { 'If-Match': Type.Optional(Type.String({ description: 'Only `*` holds: a list\'s ETag is weak and If-Match compares strongly, so any tag is 412.' })) }
const IF_MATCH_READ = { 'If-Match': Type.Optional(Type.String({ description: 'ETags (or `*`): 412 when none is current.' })) }
export const CONDITIONAL_LIST_READ = Type.Object({ ...CONDITIONAL_READ, ...IF_MATCH_LIST })
/** A record's GET also answers If-Match and If-Unmodified-Since (412 when they fail), as RFC 9110 §13.2.2 asks of every method. */
export const CONDITIONAL_RECORD_READ = Type.Object({
  ...CONDITIONAL_READ,
  ...IF_MATCH_READ,
  'If-Unmodified-Since': Type.Optional(Type.String({ description: 'HTTP date: 412 when the record changed after it (ignored with If-Match).' }))
})
export const CONDITIONAL_WRITE = Type.Object({
  'If-Match': Type.Optional(Type.String({ description: 'ETags (or `*`) the change is based on: 412 when none is current. Required (428) where the resource says so.' })),
  'If-Unmodified-Since': Type.Optional(Type.String({ description: 'HTTP date: 412 when the resource changed after it (ignored with If-Match).' })),
  'If-None-Match': Type.Optional(Type.String({ description: 'ETags (or `*`): 412 when one is current (`*`: when the resource exists).' })),
  Prefer: Type.Optional(Type.String({ description: '`return=minimal`: answer 204 without a body.' }))
})
/** The admin collections keep no modification time: only the tag conditions apply to them (admin-conditional.ts). */
export const ADMIN_LIST_READ = Type.Object({ ...IF_NONE_MATCH_READ, ...IF_MATCH_LIST })
export const ADMIN_ITEM_READ = Type.Object({ ...IF_NONE_MATCH_READ, ...IF_MATCH_READ })
export const ADMIN_REMOVE = Type.Object({
  'If-Match': Type.Optional(Type.String({ description: 'ETags (or `*`) of what the client saw: 412 when none is current, and nothing is removed.' })),
  'If-None-Match': Type.Optional(Type.String({ description: 'ETags (or `*`): 412 when one is current (`*`: when it exists), and nothing is removed.' }))
})

/** A create's preconditions, on the collection it adds to (conditional.ts). */
export const CREATE_CONDITIONS = {
  'If-Match': Type.Optional(Type.String({ description: 'Only `*` holds: the collection\'s ETag is weak and If-Match compares strongly, so any tag is 412 and nothing is created.' })),
  'If-None-Match': Type.Optional(Type.String({ description: 'ETags of the collection (as its GET without a query answers): 412 when one is current, and nothing is created. `*` is always 412: the collection exists.' }))
}
/** The 412 of a create on the collection at `path`. */
export const createPreconditionProblem = (path: string): ProblemDoc => ({
  status: 412,
  error: createPreconditionFailed(path, 'current'),
  description: 'A precondition failed, and nothing was created: If-Match other than `*`, If-None-Match: *, or an If-None-Match that names the collection\'s current ETag.'
})
/** The one precondition that can fail on a resource with no representation (a token endpoint, an action): If-Match (conditional.ts). */
export const NO_REPRESENTATION_CONDITIONS = Type.Object({
  'If-Match': Type.Optional(Type.String({ description: 'Never holds, not even `*`: this resource has no representation for it to name, so any If-Match is 412 and nothing is done (RFC 9110 §13.1.1).' }))
})
/** The 412 of such a resource at `path`, where `notDone` says what did not happen. */
export const noRepresentationProblem = (path: string, notDone: string): ProblemDoc => ({
  status: 412,
  error: noRepresentationToMatch(path, notDone),
  description: `The request carried If-Match, which cannot hold here; ${notDone}.`
})
export const CREATE_HEADERS = Type.Object({
  ...CREATE_CONDITIONS,
  'Idempotency-Key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A retry with the same key and body within 24 h gets the first response again (`Idempotent-Replayed: true`) and creates nothing. Keys are per credential.' })),
  Prefer: Type.Optional(Type.String({ description: '`return=minimal`: answer 201 with Location and no body.' }))
})

export function jsonResponse (description: string, schema: TSchema, headers?: Record<string, unknown>): unknown {
  return { description, ...(headers === undefined ? {} : { headers }), content: { 'application/json': { schema } } }
}

type HeaderDocs = Record<string, unknown>

/**
 * `responses`, each also documenting the `extra` headers (the same for every
 * status, or chosen by status) that it does not describe itself. Copies:
 * response objects are shared between routes.
 */
export function withHeaders (responses: Record<string, unknown>, extra: HeaderDocs | ((status: number) => HeaderDocs) | undefined): Record<string, unknown> {
  if (extra === undefined) return responses
  return Object.fromEntries(Object.entries(responses).map(([status, response]) => {
    const own = (response as { headers?: HeaderDocs }).headers ?? {}
    const added = Object.entries(typeof extra === 'function' ? extra(Number(status)) : extra).filter(([name]) => !(name in own))
    return [status, { ...response as object, headers: { ...own, ...Object.fromEntries(added) } }]
  }))
}
