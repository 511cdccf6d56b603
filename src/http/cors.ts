/**
 * CORS for the origins CORS_ORIGINS names: preflights answered, and the
 * response headers a browser client needs to read exposed. Only a request
 * from a listed origin gets Access-Control-* headers: @fastify/cors, given the
 * list itself, left out only Allow-Origin for any other origin (and for a
 * request with no Origin) and still sent the rest, 400 bytes on every answer.
 */
import type { FastifyCorsOptions, OriginFunction } from '@fastify/cors'

export const EXPOSED_HEADERS = [
  'Link', 'X-Total-Count', 'ETag', 'Last-Modified', 'Location', 'X-Request-Id', 'Retry-After', 'Idempotent-Replayed', 'Preference-Applied',
  'Deprecation', 'Sunset', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'
]

export const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'If-Match', 'If-None-Match', 'If-Modified-Since', 'If-Unmodified-Since', 'Idempotency-Key', 'Prefer', 'Api-Version', 'X-Request-Id']

/**
 * Why an entry of CORS_ORIGINS would never match, or undefined when it is an
 * origin as a browser writes it in `Origin`: scheme, host and a port other
 * than the default, in lower case, with no path (not even `/`).
 */
export function corsOriginFault (entry: string): string | undefined {
  if (!URL.canParse(entry)) return 'it is not a URL'
  const { origin } = new URL(entry)
  return origin === entry ? undefined : `write it as ${origin}`
}

/** The origins CORS_ORIGINS lists one by one: none for the empty setting (no CORS) or for `*` (every origin). */
export function listedCorsOrigins (setting: string): string[] {
  return setting === '' || setting === '*' ? [] : setting.split(',')
}

/** Answers @fastify/cors with the request's origin when it is listed, and with false (no CORS headers at all) otherwise. */
function listedOrigin (origins: readonly string[]): OriginFunction {
  const listed = new Set(origins)
  return (origin, grant) => { grant(null, origin !== undefined && listed.has(origin) ? origin : false) }
}

export function corsOptions (origins: string): FastifyCorsOptions {
  return {
    origin: origins === '*' ? '*' : listedOrigin(listedCorsOrigins(origins)),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    // OPTIONS then reaches the route, which adds Allow; a preflight without Origin is not an error.
    strictPreflight: false,
    preflightContinue: true
  }
}
