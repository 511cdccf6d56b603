/**
 * Checks of a definition's deprecation, made when it loads: its dates are
 * RFC 3339 (a date or a date-time), the sunset comes after the deprecation,
 * and the link is one a `Link` header can carry. `Date.parse`, used before,
 * took `'1'` (the year 2001) and `'March 7'`; a link with `>` broke the header's
 * syntax, and one with a line break made every answer of the resource a 500.
 */
import { canonicalDateTime } from '../http/date-time.js'
import type { Deprecation } from './define.js'

const DATE = /^\d{4}-\d{2}-\d{2}$/

/** The instant a deprecation date names (a date: its start, in UTC), or undefined when it is not RFC 3339. */
function instantOf (text: string): number | undefined {
  const canonical = canonicalDateTime(DATE.test(text) ? `${text}T00:00:00Z` : text)
  return canonical === undefined ? undefined : Date.parse(canonical)
}

/** A URI reference with nothing a Link header's `<…>` cannot hold: an http(s) URL, or a path on this service. */
const LINKABLE = /^(?:https?:\/\/|\/)[^\s<>"{}|\\^`]*$/

/** What is wrong with a resource's deprecation, if anything. */
export function deprecationFault (deprecation: Deprecation): string | undefined {
  const { since, sunset, link } = deprecation
  for (const [key, value] of [['since', since], ['sunset', sunset]] as const) {
    if (value !== undefined && instantOf(value) === undefined) return `deprecated.${key} ${JSON.stringify(value)} must be an RFC 3339 date (2027-06-30) or date-time (2027-06-30T00:00:00Z)`
  }
  if (since !== undefined && sunset !== undefined && instantOf(sunset)! <= instantOf(since)!) return `deprecated.sunset (${sunset}) must come after deprecated.since (${since})`
  if (link !== undefined && !(LINKABLE.test(link) && (link.startsWith('/') || URL.canParse(link)))) {
    return `deprecated.link ${JSON.stringify(link)} must be an http(s) URL or a path starting with /, without spaces, quotes or angle brackets: it is sent in a Link header`
  }
  return undefined
}
