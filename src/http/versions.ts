/**
 * API versions. Paths carry the version (`/v1/...`); a client may instead send
 * `Api-Version: 1` on an unprefixed path, which is rewritten before routing so
 * both forms reach the same route and links stay canonical.
 */
import type { IncomingMessage } from 'node:http'

export const API_VERSIONS: readonly string[] = ['1']
export const CURRENT_VERSION = '1'

/** Paths that belong to no version: operations and documentation. */
const UNVERSIONED = /^\/(health|ready|openapi\.json|docs)(\/|\?|$)/

export function rewriteVersionedUrl (request: IncomingMessage): string {
  const url = request.url ?? '/'
  const header = request.headers['api-version']
  if (typeof header !== 'string' || /^\/v[^/]*(\/|\?|$)/.test(url) || UNVERSIONED.test(url)) return url
  // Only digits reach the path, so a header can never smuggle path segments.
  const version = /^[0-9]{1,4}$/.test(header.trim()) ? header.trim() : 'unknown'
  return `/v${version}${url === '/' ? '' : url}`
}
