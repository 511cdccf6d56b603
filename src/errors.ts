/**
 * The one catalog of errors the engine raises on purpose. Each entry fixes the
 * HTTP status, the problem `type` and `title` (RFC 9457); the message template
 * becomes the `detail`. Anything thrown that is not in this catalog (and is not
 * one of Fastify's own client errors) is answered as an opaque 500.
 */
import createError, { type FastifyErrorConstructor } from '@fastify/error'

/** Where in the request an offending value was found, as the problem's `errors[].in` says. */
export type IssueLocation = 'body' | 'query' | 'path' | 'header'

export interface ProblemIssue {
  readonly in: IssueLocation
  /** JSON Pointer (RFC 6901) to the offending value within that part. */
  readonly pointer: string
  readonly detail: string
}

interface CatalogEntry {
  readonly status: number
  readonly title: string
  readonly slug: string
}

export const PROBLEM_TYPE_PREFIX = 'urn:resourcery:problem:'

const catalog = new Map<string, CatalogEntry>()

function define (code: `RSY_ERR_${string}`, status: number, slug: string, title: string, message: string): FastifyErrorConstructor {
  catalog.set(code, { status, slug, title })
  return createError(code, message, status)
}

// Requests
export const ValidationFailed = define('RSY_ERR_REQUEST_INVALID', 400, 'validation', 'Request is invalid', '%s')
export const MalformedBody = define('RSY_ERR_BODY_MALFORMED', 400, 'malformed-body', 'Request body is not valid JSON', '%s')
export const UnknownVersion = define('RSY_ERR_VERSION_UNKNOWN', 404, 'unknown-version', 'API version does not exist', '%s')
export const RouteNotFound = define('RSY_ERR_ROUTE_NOT_FOUND', 404, 'not-found', 'Not Found', '%s')
export const MethodNotAllowed = define('RSY_ERR_METHOD_NOT_ALLOWED', 405, 'method-not-allowed', 'Method Not Allowed', '%s')
export const BodyTooLarge = define('RSY_ERR_BODY_TOO_LARGE', 413, 'body-too-large', 'Content Too Large', '%s')
export const UnsupportedMediaType = define('RSY_ERR_MEDIA_TYPE_UNSUPPORTED', 415, 'unsupported-media-type', 'Unsupported Media Type', '%s')

// Resources
export const ResourceNotFound = define('RSY_ERR_RESOURCE_NOT_FOUND', 404, 'not-found', 'Not Found', '%s')
export const UniqueViolation = define('RSY_ERR_RESOURCE_CONFLICT', 409, 'unique-violation', 'A unique field is already taken', '%s')
export const StillReferenced = define('RSY_ERR_RESOURCE_REFERENCED', 409, 'still-referenced', 'Resource is still referenced', '%s')

// Service
export const StoreUnavailable = define('RSY_ERR_STORE_UNAVAILABLE', 503, 'unavailable', 'Service Unavailable', '%s')

/** The catalog entry for a code, or undefined for errors the catalog does not own. */
export function catalogEntry (code: string | undefined): CatalogEntry | undefined {
  return code === undefined ? undefined : catalog.get(code)
}

/** Every code in the catalog, for documentation and for the uniqueness test. */
export function catalogCodes (): string[] {
  return [...catalog.keys()]
}

const issuesKey = Symbol('resourcery.issues')

/** A 400 that names every offending value; the handler turns `issues` into `errors`. */
export function invalid (issues: readonly ProblemIssue[], detail?: string): Error {
  const summary = detail ?? (issues.length === 1 ? `${issues[0]!.pointer} ${issues[0]!.detail}` : `${issues.length} values are invalid`)
  const error = new ValidationFailed(summary)
  Object.defineProperty(error, issuesKey, { value: issues })
  return error
}

export function issuesOf (error: unknown): readonly ProblemIssue[] | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  return (error as Record<symbol, readonly ProblemIssue[] | undefined>)[issuesKey]
}
