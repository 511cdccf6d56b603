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

/**
 * A refusal (4xx) is the client's to fix and is logged by its problem type
 * and detail, never its stack; capturing one cost a 404 or 401 about a tenth
 * of its CPU, which a flood of bad requests would spend for nothing. 5xx
 * errors keep theirs for the log.
 */
function define (code: `RSY_ERR_${string}`, status: number, slug: string, title: string, message: string): FastifyErrorConstructor {
  catalog.set(code, { status, slug, title })
  return createError(code, message, status, Error, status >= 500)
}

// Requests
export const ValidationFailed = define('RSY_ERR_REQUEST_INVALID', 400, 'validation', 'Request is invalid', '%s')
export const MalformedBody = define('RSY_ERR_BODY_MALFORMED', 400, 'malformed-body', 'Request body is not valid JSON', '%s')
export const UnknownVersion = define('RSY_ERR_VERSION_UNKNOWN', 404, 'unknown-version', 'API version does not exist', '%s')
export const RouteNotFound = define('RSY_ERR_ROUTE_NOT_FOUND', 404, 'not-found', 'Not Found', '%s')
export const MethodNotAllowed = define('RSY_ERR_METHOD_NOT_ALLOWED', 405, 'method-not-allowed', 'Method Not Allowed', '%s')
export const BodyTooLarge = define('RSY_ERR_BODY_TOO_LARGE', 413, 'body-too-large', 'Content Too Large', '%s')
export const NotAcceptable = define('RSY_ERR_MEDIA_TYPE_NOT_ACCEPTABLE', 406, 'not-acceptable', 'Not Acceptable', '%s')
/** The 406 for an Accept that allows neither type the service produces: sent (negotiation.ts) and shown as the document's example. */
export const NOTHING_ACCEPTABLE = 'this service produces application/json and application/problem+json; the Accept header allows neither'
export const UnsupportedMediaType = define('RSY_ERR_MEDIA_TYPE_UNSUPPORTED', 415, 'unsupported-media-type', 'Unsupported Media Type', '%s')
export const VersionNotSupported = define('RSY_ERR_HTTP_VERSION_UNSUPPORTED', 505, 'http-version-not-supported', 'HTTP Version Not Supported', '%s')
export const ExpectationFailed = define('RSY_ERR_EXPECTATION_FAILED', 417, 'expectation-failed', 'Expectation Failed', '%s')

// Resources
export const ResourceNotFound = define('RSY_ERR_RESOURCE_NOT_FOUND', 404, 'not-found', 'Not Found', '%s')
export const UniqueViolation = define('RSY_ERR_RESOURCE_CONFLICT', 409, 'unique-violation', 'A unique field is already taken', '%s')
export const DeliveryNotResendable = define('RSY_ERR_DELIVERY_NOT_RESENDABLE', 409, 'delivery-not-resendable', 'The delivery cannot be resent now', '%s')
export const StillReferenced = define('RSY_ERR_RESOURCE_REFERENCED', 409, 'still-referenced', 'Resource is still referenced', '%s')

// Authentication and authorization
export const Unauthenticated = define('RSY_ERR_AUTH_MISSING', 401, 'unauthenticated', 'Authentication required', '%s')
export const InvalidCredential = define('RSY_ERR_AUTH_INVALID', 401, 'invalid-token', 'Invalid credential', '%s')
export const ScopeMissing = define('RSY_ERR_SCOPE_MISSING', 401, 'insufficient-scope', 'Insufficient scope', '%s')
export const ScopeForbidden = define('RSY_ERR_SCOPE_FORBIDDEN', 403, 'insufficient-scope', 'Insufficient scope', '%s')
export const OAuthInvalidClient = define('RSY_ERR_OAUTH_INVALID_CLIENT', 401, 'oauth-invalid-client', 'Client authentication failed', '%s')
export const OAuthInvalidRequest = define('RSY_ERR_OAUTH_INVALID_REQUEST', 400, 'oauth-invalid-request', 'Invalid token request', '%s')
export const OAuthInvalidScope = define('RSY_ERR_OAUTH_INVALID_SCOPE', 400, 'oauth-invalid-scope', 'Invalid scope', '%s')
export const OAuthUnsupportedGrant = define('RSY_ERR_OAUTH_UNSUPPORTED_GRANT', 400, 'oauth-unsupported-grant-type', 'Unsupported grant type', '%s')

// Concurrency and idempotency
export const PreconditionFailed = define('RSY_ERR_PRECONDITION_FAILED', 412, 'precondition-failed', 'Precondition Failed', '%s')
export const PreconditionRequired = define('RSY_ERR_PRECONDITION_REQUIRED', 428, 'precondition-required', 'Precondition Required', '%s')
export const IdempotencyKeyReused = define('RSY_ERR_IDEMPOTENCY_KEY_REUSED', 422, 'idempotency-key-reused', 'Idempotency key reused with another request', '%s')
export const IdempotencyInProgress = define('RSY_ERR_IDEMPOTENCY_IN_PROGRESS', 409, 'idempotency-in-progress', 'The first request with this idempotency key is still running', '%s')

// Limits
export const TooManyRequests = define('RSY_ERR_RATE_LIMITED', 429, 'rate-limited', 'Too Many Requests', '%s')
/** The 429 of a credential (or an address) past `max` requests in `windowSeconds`, which may try again after `retryAfterSeconds`. */
export const rateLimited = (max: number, windowSeconds: number, retryAfterSeconds: number): Error =>
  new TooManyRequests(`more than ${max} requests in ${windowSeconds} s; retry after ${retryAfterSeconds} s`)
export const UriTooLong = define('RSY_ERR_QUERY_TOO_LONG', 414, 'uri-too-long', 'URI Too Long', '%s')

// Service
const StoreUnavailableError = define('RSY_ERR_STORE_UNAVAILABLE', 503, 'unavailable', 'Service Unavailable', '%s')
const ShuttingDownError = define('RSY_ERR_SHUTTING_DOWN', 503, 'shutting-down', 'Service Unavailable', '%s')
const IssuerUnreachableError = define('RSY_ERR_ISSUER_UNREACHABLE', 503, 'issuer-unreachable', 'Service Unavailable', '%s')

/**
 * Seconds a client should wait before retrying a 503 (its Retry-After, RFC
 * 9110 §10.2.3): a database outage or failover takes seconds; a process that
 * is shutting down is replaced by the load balancer's next pick at once.
 */
const RETRY_DATABASE_SECONDS = 5
const RETRY_SHUTDOWN_SECONDS = 1

/** 503: the database did not answer. */
export function storeUnavailable (detail: string): Error {
  return annotate(new StoreUnavailableError(detail), { headers: { 'retry-after': String(RETRY_DATABASE_SECONDS) } })
}

/**
 * 503: the keys that verify a token are the issuer's (JWKS), and it could not
 * be reached. Not the token's fault: a 401 would tell the client to throw away
 * a credential that may well be good.
 */
export function issuerUnreachable (detail: string): Error {
  return annotate(new IssuerUnreachableError(detail), { headers: { 'retry-after': String(RETRY_DATABASE_SECONDS) } })
}

/** 503: the request arrived on an open connection after this process began shutting down. */
export function shuttingDown (): Error {
  return annotate(new ShuttingDownError('this process is shutting down; retry, and a new connection will reach one that is running'), { headers: { 'retry-after': String(RETRY_SHUTDOWN_SECONDS) } })
}

/** 409: a retry under an Idempotency-Key whose first request has not answered yet. */
export const firstRequestRunning = (): Error => new IdempotencyInProgress('the first request with this Idempotency-Key is still running; retry shortly')

/** The catalog entry for a code, or undefined for errors the catalog does not own. */
export function catalogEntry (code: string | undefined): CatalogEntry | undefined {
  return code === undefined ? undefined : catalog.get(code)
}

/** Every code in the catalog, for documentation and for the uniqueness test. */
export function catalogCodes (): string[] {
  return [...catalog.keys()]
}

const annotationKey = Symbol('resourcery.problem')

/** What an error adds to its problem answer besides status, title and detail. */
export interface ProblemAnnotation {
  /** Every offending value (400 validation). */
  readonly issues?: readonly ProblemIssue[]
  /** Response headers the answer must carry (WWW-Authenticate, Retry-After…). */
  readonly headers?: Readonly<Record<string, string>>
  /** Extension members of the problem body, such as OAuth's `error`. */
  readonly members?: Readonly<Record<string, string>>
}

export function annotate<E extends Error> (error: E, annotation: ProblemAnnotation): E {
  Object.defineProperty(error, annotationKey, { value: { ...annotationOf(error), ...annotation } })
  return error
}

export function annotationOf (error: unknown): ProblemAnnotation {
  if (typeof error !== 'object' || error === null) return {}
  return (error as Record<symbol, ProblemAnnotation | undefined>)[annotationKey] ?? {}
}

/**
 * The detail of a 400: its one issue spelled out, or how many there are. An
 * issue about the whole body or query (pointer "") is named by where it is.
 */
export function issuesSummary (issues: readonly ProblemIssue[], where?: string): string {
  if (issues.length === 1) return `${issues[0]!.pointer || issues[0]!.in} ${issues[0]!.detail}`
  // Issues all in one place say where, whichever check found them.
  const place = where ?? (issues.every(issue => issue.in === issues[0]?.in) ? issues[0]?.in : undefined)
  return `${issues.length} values ${place === undefined ? '' : `in the ${place} `}are invalid`
}

/** A 400 that names every offending value; the handler turns `issues` into `errors`. */
export function invalid (issues: readonly ProblemIssue[], detail?: string): Error {
  return annotate(new ValidationFailed(detail ?? issuesSummary(issues)), { issues })
}
