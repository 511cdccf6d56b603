/**
 * The IETF draft's rate-limit fields (draft-ietf-httpapi-ratelimit-headers),
 * as the service sends them and as the document shows them: one policy,
 * named "default".
 */

/** `RateLimit-Policy`: `limit` requests in a window of `windowSeconds`. */
export const policyField = (limit: unknown, windowSeconds: unknown): string => `"default";q=${String(limit)};w=${String(windowSeconds)}`

/** `RateLimit`: `remaining` requests left, for `resetSeconds` more seconds. */
export const remainingField = (remaining: unknown, resetSeconds: unknown): string => `"default";r=${String(remaining)};t=${String(resetSeconds)}`
