/**
 * An example body for each problem status the OpenAPI document lists, made
 * by the same toProblem that answers real requests, from the same errors the
 * engine raises: the examples cannot drift from what the service sends.
 */
import { insufficientScope } from '../auth/authenticate.js'
import {
  BodyTooLarge, IdempotencyKeyReused, invalid, MethodNotAllowed, NotAcceptable, PreconditionFailed, PreconditionRequired,
  ResourceNotFound, storeUnavailable, TooManyRequests, Unauthenticated, UniqueViolation, UnsupportedMediaType, UriTooLong
} from '../errors.js'
import { toProblem, type Problem } from '../http/problem.js'

const CONTEXT = { instance: '/v1/projects/7', requestId: '8d0f1b1e-54a3-4c8b-9a3e-2f0b7c6d5e41' }

/** The error each status is shown with: the most common cause of it. */
const SAMPLES: Readonly<Record<number, () => unknown>> = {
  400: () => invalid([
    { in: 'body', pointer: '/budget', detail: 'must be >= 0' },
    { in: 'body', pointer: '/colour', detail: 'is not a known property' }
  ], '2 values in the body are invalid'),
  401: () => new Unauthenticated('send a credential: Authorization: Bearer <token or API key>'),
  403: () => insufficientScope('projects:write', 403),
  404: () => new ResourceNotFound('no project with id 7'),
  405: () => new MethodNotAllowed('POST is not allowed here; allowed: GET, HEAD, PUT, PATCH, DELETE, OPTIONS'),
  406: () => new NotAcceptable('this service produces application/json and application/problem+json; the Accept header allows neither'),
  409: () => new UniqueViolation('another project already has this name'),
  412: () => new PreconditionFailed('the project has changed since that ETag; GET it again'),
  413: () => new BodyTooLarge('the body is larger than the limit of 1048576 bytes'),
  414: () => new UriTooLong('the query string is longer than 4096 characters'),
  415: () => new UnsupportedMediaType('Content-Type text/plain is not accepted here; send application/json'),
  422: () => new IdempotencyKeyReused('this Idempotency-Key was used with a different request; use a new key for a new request'),
  428: () => new PreconditionRequired('changing a project needs If-Match with its current ETag'),
  429: () => new TooManyRequests('more than 100 requests in 60 s; retry after 42 s'),
  // Anything the catalog does not know is answered as an opaque 500.
  500: () => new Error('example'),
  503: () => storeUnavailable('the database is unavailable; try again shortly')
}

export function problemExample (status: number): Problem | undefined {
  const sample = SAMPLES[status]
  return sample === undefined ? undefined : toProblem(sample(), CONTEXT).body
}
