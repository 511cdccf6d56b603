/**
 * Event names and the patterns subscriptions choose them by:
 * `{collection}.{created|updated|deleted}`, with `*` for either part.
 */
import type { ProblemIssue } from '../errors.js'

export const EVENT_KINDS = ['created', 'updated', 'deleted'] as const

/** Whether a subscription pattern names this event type. */
export function patternMatches (pattern: string, type: string): boolean {
  if (pattern === '*') return true
  const [collection, kind] = pattern.split('.')
  const [eventCollection, eventKind] = type.split('.')
  return (collection === '*' || collection === eventCollection) && (kind === '*' || kind === eventKind)
}

/** Problems with the patterns of a subscription: each must name a known collection (or `*`) and kind (or `*`). */
export function patternIssues (patterns: readonly string[], collections: readonly string[]): ProblemIssue[] {
  const issues: ProblemIssue[] = []
  patterns.forEach((pattern, index) => {
    const [collection, kind, extra] = pattern.split('.')
    const known = pattern === '*' || (extra === undefined && collection !== undefined && kind !== undefined &&
      (collection === '*' || collections.includes(collection)) && (kind === '*' || (EVENT_KINDS as readonly string[]).includes(kind)))
    if (!known) {
      issues.push({ in: 'body', pointer: `/events/${index}`, detail: `"${pattern}" is not an event of this service: use {collection}.{created|updated|deleted} with ${collections.join(', ')}, or * for either part` })
    }
  })
  return issues
}
