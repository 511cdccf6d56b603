/**
 * An example body for each problem status the OpenAPI document lists, made
 * by the same toProblem that answers real requests, from the same errors the
 * engine raises: the examples cannot drift from what the service sends.
 */
import { insufficientScope, noCredential } from '../auth/authenticate.js'
import {
  BodyTooLarge, IdempotencyKeyReused, invalid, MethodNotAllowed, NotAcceptable, NOTHING_ACCEPTABLE, PreconditionFailed, PreconditionRequired,
  rateLimited, ResourceNotFound, storeUnavailable, UniqueViolation, UnsupportedMediaType, UriTooLong
} from '../errors.js'
import { PROBLEM_MEDIA_TYPE, toProblem, type Problem } from '../http/problem.js'
import { DEFAULT_RATE_LIMIT, EXAMPLE_ID, EXAMPLE_REQUEST_ID, refusedWaitExample } from './header-examples.js'
import { itemPath } from './links.js'

// The document's transform sets each example's instance to its own operation's path (withExampleInstance).
const CONTEXT = { instance: itemPath('projects', EXAMPLE_ID), requestId: EXAMPLE_REQUEST_ID }

/** The error each status is shown with: the most common cause of it. */
const SAMPLES: Readonly<Record<number, () => unknown>> = {
  // True of every body the service takes (each refuses properties it does not declare), whatever its fields.
  400: () => invalid([{ in: 'body', pointer: '/colour', detail: 'is not a known property' }]),
  401: noCredential,
  403: () => insufficientScope('projects:write', 403),
  404: () => new ResourceNotFound(`no project with id ${EXAMPLE_ID}`),
  405: () => new MethodNotAllowed('POST is not allowed here; allowed: GET, HEAD, PUT, PATCH, DELETE, OPTIONS'),
  406: () => new NotAcceptable(NOTHING_ACCEPTABLE),
  409: () => new UniqueViolation('another project already has this name'),
  412: () => new PreconditionFailed('the project has changed since that ETag; GET it again'),
  413: () => new BodyTooLarge('the body is larger than the limit of 1048576 bytes'),
  414: () => new UriTooLong('the query string is longer than 4096 characters'),
  415: () => new UnsupportedMediaType('Content-Type text/plain is not accepted here; send application/json'),
  422: () => new IdempotencyKeyReused('this Idempotency-Key was used with a different request; use a new key for a new request'),
  428: () => new PreconditionRequired('changing a project needs If-Match with its current ETag'),
  429: () => rateLimited(DEFAULT_RATE_LIMIT.max, DEFAULT_RATE_LIMIT.windowSeconds, refusedWaitExample(DEFAULT_RATE_LIMIT)),
  // Anything the catalog does not know is answered as an opaque 500.
  500: () => new Error('example'),
  503: () => storeUnavailable('the database is unavailable; try again shortly')
}

/**
 * A problem as one operation answers it: described, and shown by the error the
 * service raises there (the example is made from it as real answers are), where
 * the common wording and example would not be true of that operation.
 */
export interface ProblemDoc {
  readonly status: number
  readonly error: unknown
  /** Where the common description is not true of the operation. */
  readonly description?: string
}

/** The 403 of a route that needs `scope`, naming it as the service does. */
export const scopeProblem = (scope: string): ProblemDoc => ({ status: 403, error: insufficientScope(scope, 403) })

/** The problem body the service answers for `error`, as an example. */
export const exampleOf = (error: unknown): Problem => toProblem(error, CONTEXT).body

export function problemExample (status: number): Problem | undefined {
  const sample = SAMPLES[status]
  return sample === undefined ? undefined : exampleOf(sample())
}

/** The webhook event the examples are about. */
export const EXAMPLE_EVENT_ID = 'msg_2f0b7c6d5e418d0f1b1e54a34c8b9a3e'
/** Path parameters as the examples show them, by name. */
const PATH_EXAMPLES: Readonly<Record<string, string>> = { id: String(EXAMPLE_ID), eventId: EXAMPLE_EVENT_ID }

/** The path of an example request to the route `url` (`/v1/tasks/:id` → `/v1/tasks/1`). */
export function examplePath (url: string): string {
  return url.replace(/:(\w+)/g, (_, name: string) => PATH_EXAMPLES[name] ?? name).replace(/(.)\/$/, '$1')
}

/** `responses` with the `instance` of every problem example set to `instance`, the path the operation answers at. Copies. */
export function withExampleInstance (responses: Readonly<Record<string, unknown>>, instance: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(responses).map(([status, response]) => {
    const media = (response as { content?: Record<string, { example?: Problem }> }).content?.[PROBLEM_MEDIA_TYPE]
    if (media?.example === undefined) return [status, response]
    const content = { ...(response as { content: object }).content, [PROBLEM_MEDIA_TYPE]: { ...media, example: { ...media.example, instance } } }
    return [status, { ...response as object, content }]
  }))
}

/** What a 400 is about, by what the operation takes: a body, a query, only a path, or nothing at all. */
export type RequestInput = 'body' | 'query' | 'path' | 'none'

const VALIDATION_SAMPLES: Readonly<Record<Exclude<RequestInput, 'body'>, () => unknown>> = {
  // Every route with query parameters takes `limit`, from 1.
  query: () => invalid([{ in: 'query', pointer: '/limit', detail: 'must be >= 1' }]),
  path: () => invalid([{ in: 'path', pointer: '/id', detail: 'must be >= 1' }]),
  none: () => invalid([{ in: 'query', pointer: '/limit', detail: 'is not a parameter of this route, which takes none' }])
}

/** The request parts a route's schema declares, as RequestInput. */
export function requestInputOf (schema: { body?: unknown, querystring?: unknown, params?: unknown }): RequestInput {
  const declares = (part: unknown): boolean => Object.keys((part as { properties?: object } | undefined)?.properties ?? {}).length > 0
  if (schema.body !== undefined) return 'body'
  if (declares(schema.querystring)) return 'query'
  return declares(schema.params) ? 'path' : 'none'
}

/** `responses` with the example of `status` made from `error`, as the service would answer it. Copies: response objects are shared between routes. */
function withProblemExample (responses: Readonly<Record<string, unknown>>, status: number, error: unknown): Record<string, unknown> {
  const response = responses[status] as { content?: Record<string, object> } | undefined
  if (response?.content === undefined) return { ...responses }
  const example = exampleOf(error)
  return { ...responses, [status]: { ...response, content: { ...response.content, [PROBLEM_MEDIA_TYPE]: { ...response.content[PROBLEM_MEDIA_TYPE], example } } } }
}

/**
 * A route's documented 400 with an example about what the route takes: a GET
 * shown body errors would tell a client generator's user something untrue.
 */
export function withFittingValidationExample (responses: Readonly<Record<string, unknown>>, input: RequestInput): Record<string, unknown> {
  return input === 'body' ? { ...responses } : withProblemExample(responses, 400, VALIDATION_SAMPLES[input]())
}
