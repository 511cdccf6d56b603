/**
 * Paths the router cannot take: not valid percent-encoding (400), or with a
 * segment longer than its bound on a path parameter (414). Both the check
 * before routing (plugins/unroutable.ts) and the router's own refusals
 * (frameworkErrors, plugins/problems.ts) answer with these.
 */
import { invalid, UriTooLong } from '../errors.js'
import { instanceOf } from './instance.js'

/** The router's bound on one path parameter: longer ids still reach validation (400); past this, 414. */
export const MAX_PATH_PARAMETER_LENGTH = 1000

export const malformedPath = (): Error => invalid([{ in: 'path', pointer: '', detail: 'is not valid percent-encoding (RFC 3986 §2.1)' }])

export const overlongSegment = (): Error => new UriTooLong(`a path segment is longer than ${MAX_PATH_PARAMETER_LENGTH} characters`)

/** Why the path of `url` cannot be routed, if it cannot. An ordinary URL (no `%`, not long) costs two comparisons. */
export function pathRefusal (url: string): Error | undefined {
  if (!url.includes('%') && url.length <= MAX_PATH_PARAMETER_LENGTH) return undefined
  const path = instanceOf(url)
  try {
    decodeURI(path)
  } catch {
    return malformedPath()
  }
  return path.split('/').some(segment => segment.length > MAX_PATH_PARAMETER_LENGTH) ? overlongSegment() : undefined
}
