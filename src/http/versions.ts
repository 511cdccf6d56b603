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

/** The scheme and authority of an absolute-form target (`http://host:port`), which a proxy-style client sends. */
const ABSOLUTE_FORM_ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/

/**
 * The target as origin-form, the path and query a route is matched on: an
 * absolute-form target (RFC 9112 §3.2.2, which a server must accept) without
 * its scheme and authority. Asterisk-form (`*`) and authority-form (CONNECT)
 * have no path and are left as they are.
 */
export function originForm (url: string): string {
  if (url.startsWith('/')) return url
  const origin = ABSOLUTE_FORM_ORIGIN.exec(url)
  if (origin === null) return url
  const rest = url.slice(origin[0].length)
  return rest.startsWith('/') ? rest : `/${rest}`
}

export function rewriteVersionedUrl (request: IncomingMessage): string {
  const url = originForm(request.url ?? '/')
  const header = request.headers['api-version']
  // Only a path can take a version: `*` is about the server as a whole.
  if (typeof header !== 'string' || !url.startsWith('/') || /^\/v[^/]*(\/|\?|$)/.test(url) || UNVERSIONED.test(url)) return url
  // Only digits reach the path, so a header can never smuggle path segments.
  const version = /^[0-9]{1,4}$/.test(header.trim()) ? header.trim() : 'unknown'
  return `/v${version}${url === '/' ? '' : url}`
}
