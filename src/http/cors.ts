/**
 * CORS for the origins CORS_ORIGINS names: preflights answered, and the
 * response headers a browser client needs to read exposed.
 */
import type { FastifyCorsOptions } from '@fastify/cors'

export const EXPOSED_HEADERS = [
  'Link', 'X-Total-Count', 'ETag', 'Last-Modified', 'Location', 'X-Request-Id', 'Retry-After', 'Idempotent-Replayed', 'Preference-Applied',
  'Deprecation', 'Sunset', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'
]

export const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'If-Match', 'If-None-Match', 'If-Modified-Since', 'If-Unmodified-Since', 'Idempotency-Key', 'Prefer', 'Api-Version', 'X-Request-Id']

export function corsOptions (origins: string): FastifyCorsOptions {
  return {
    origin: origins === '*' ? '*' : origins.split(','),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    // OPTIONS then reaches the route, which adds Allow; a preflight without Origin is not an error.
    strictPreflight: false,
    preflightContinue: true
  }
}
