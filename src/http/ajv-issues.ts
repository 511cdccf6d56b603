/**
 * Ajv's error list → one issue per offending value, each with a JSON Pointer
 * and a sentence a client developer can act on. Union branches that did not
 * apply are folded into the one issue they explain.
 */
import type { IssueLocation, ProblemIssue } from '../errors.js'

/** The subset of Ajv's ErrorObject this module reads. */
export interface AjvError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  /** Where in the schema the failing keyword is: tells which branch of a union an error comes from. */
  schemaPath?: string
  message?: string
  /** The offending value (Ajv's `verbose` option). */
  data?: unknown
}

/** The detail of a member the schema does not declare (merged-check.ts adds how to remove one). */
export const UNKNOWN_PROPERTY = 'is not a known property'

const list = (values: unknown[]): string => values.map(value => JSON.stringify(value)).join(', ')

function pointerOf (error: AjvError): string {
  if (error.keyword === 'required') return `${error.instancePath}/${String(error.params.missingProperty)}`
  if (error.keyword === 'additionalProperties') return `${error.instancePath}/${String(error.params.additionalProperty)}`
  return error.instancePath
}

/** A JSON value's type, in the words of JSON Schema's `type`. */
function jsonTypeOf (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer'
  // JSON.parse reads 1e309 as Infinity, which JSON Schema's number excludes: "not number" would puzzle.
  if (typeof value === 'number' && !Number.isFinite(value)) return 'a number beyond ±1.8e308'
  return typeof value
}

/**
 * What was sent, when the type was wrong: `must be string, not null` tells a
 * client that null cannot remove a required field, and `must be integer, not
 * string` that "2" is not read as 2. In a path or query every value arrives
 * as text, so there it would say nothing.
 */
const sentType = (error: AjvError, location: IssueLocation): string =>
  location === 'body' && 'data' in error ? `, not ${jsonTypeOf(error.data)}` : ''

/** What a value of a format looks like, where "must be a valid date" would leave the reader to guess. */
const FORMAT_SENTENCES: Readonly<Record<string, string>> = {
  'date-time': 'must be an RFC 3339 date-time such as 2026-01-01T00:00:00Z, precise to the millisecond at most, without a leap second',
  date: 'must be a calendar date written YYYY-MM-DD, such as 2026-01-31'
}

function sentence (error: AjvError, location: IssueLocation, readOnly: readonly string[]): string {
  const { params } = error
  switch (error.keyword) {
    case 'required': return 'is required'
    case 'additionalProperties':
      return error.instancePath === '' && readOnly.includes(String(params.additionalProperty))
        ? 'is read-only and cannot be set'
        : UNKNOWN_PROPERTY
    case 'enum': return `must be one of ${list(params.allowedValues as unknown[])}`
    case 'const': return `must be ${JSON.stringify(params.allowedValue)}`
    case 'type': return `must be ${String(params.type).replace(',', ' or ')}${sentType(error, location)}`
    case 'format': return FORMAT_SENTENCES[String(params.format)] ?? `must be a valid ${String(params.format)}`
    default: return error.message ?? 'is invalid'
  }
}

/** Within a union, the errors of the branch of the right type explain best; type mismatches least. */
function unionSentence (errors: AjvError[], location: IssueLocation, readOnly: readonly string[]): string {
  const branches = errors.filter(error => !isUnion(error))
  const specific = branches.filter(error => error.keyword !== 'type' && error.keyword !== 'const' && error.keyword !== 'enum')
  if (specific.length > 0) return sentence(specific[0]!, location, readOnly)
  const allowed = branches.flatMap(error => {
    if (error.keyword === 'const') return [error.params.allowedValue]
    if (error.keyword === 'enum') return error.params.allowedValues as unknown[]
    return []
  })
  // A type that the allowed values already show (`string` beside "todo") says nothing more.
  const types = [...new Set(branches.filter(error => error.keyword === 'type').map(error => String(error.params.type)))]
    .filter(type => !allowed.some(value => jsonTypeOf(value) === type))
  const parts = [...(allowed.length > 0 ? [`one of ${list(allowed)}`] : []), ...types]
  if (parts.length === 0) return 'does not match any allowed form'
  // "not string" of "x" when the allowed values are strings would mislead: name the type only when no form takes it.
  const union = errors.find(isUnion)
  const sentAnAllowedType = union !== undefined && allowed.some(value => jsonTypeOf(value) === jsonTypeOf(union.data))
  return `must be ${parts.join(' or ')}${union === undefined || sentAnAllowedType ? '' : sentType(union, location)}`
}

const isUnion = (error: AjvError): boolean => error.keyword === 'anyOf' || error.keyword === 'oneOf'

/** A pointer to a member of the value at `parent`, not deeper: where a variant's tag (`kind`) sits. */
const isMemberOf = (pointer: string, parent: string): boolean => pointer.startsWith(`${parent}/`) && !pointer.slice(parent.length + 1).includes('/')

/**
 * Of a union's branches, the ones that explain a failure. Those that got
 * inside the value (errors below its pointer) explain better than those that
 * did not: a type that does not fit, such as the null of a nullable object,
 * is noise beside "/frame/height must be >= 1". Of those, a branch whose tag
 * the value does not match (a `const` or `enum` member, like `kind`) is
 * another variant: `{kind: "square", side: "x"}` is a square with a bad
 * side, not also a circle without `r`. The union's own error goes with the
 * branches dropped. Where nothing tells the branches apart, all are kept.
 */
function focusUnions (errors: readonly AjvError[]): readonly AjvError[] {
  let kept = errors
  for (const union of errors) {
    if (!isUnion(union) || union.schemaPath === undefined) continue
    const prefix = `${union.schemaPath}/`
    const branchOf = (error: AjvError): string | undefined => error.schemaPath?.startsWith(prefix) === true ? error.schemaPath.slice(prefix.length).split('/')[0] : undefined
    const branches = new Set<string>()
    const inside = new Set<string>()
    const otherVariant = new Set<string>()
    for (const error of kept) {
      const branch = branchOf(error)
      if (branch === undefined) continue
      branches.add(branch)
      if (pointerOf(error).startsWith(`${union.instancePath}/`)) inside.add(branch)
      if ((error.keyword === 'const' || error.keyword === 'enum') && isMemberOf(error.instancePath, union.instancePath)) otherVariant.add(branch)
    }
    const tagged = [...inside].filter(branch => !otherVariant.has(branch))
    const explaining = tagged.length > 0 ? new Set(tagged) : inside
    if (explaining.size === 0 || explaining.size === branches.size) continue
    kept = kept.filter(error => {
      const branch = branchOf(error)
      return error !== union && (branch === undefined || explaining.has(branch))
    })
  }
  return kept
}

export function describeAjvErrors (errors: readonly AjvError[], location: IssueLocation, readOnly: readonly string[]): ProblemIssue[] {
  const byPointer = new Map<string, AjvError[]>()
  for (const error of focusUnions(errors)) {
    const pointer = pointerOf(error)
    const group = byPointer.get(pointer) ?? []
    group.push(error)
    byPointer.set(pointer, group)
  }
  const issues: ProblemIssue[] = []
  for (const [pointer, group] of byPointer) {
    // Two `const`s for one value are two variants' tags (`kind` must be "circle", or "square"): one sentence lists both.
    if (group.some(isUnion) || group.filter(error => error.keyword === 'const').length > 1) {
      issues.push({ in: location, pointer, detail: unionSentence(group, location, readOnly) })
    } else {
      // `{type: string, enum: [...]}` given 3 fails both keywords: one sentence says it all, naming
      // the type sent when the set holds none of it (not `1.5` to a set of integers: a number too).
      const mistyped = group.find(error => error.keyword === 'type')
      const listed = group.find(error => error.keyword === 'enum')
      const foreign = mistyped !== undefined && listed !== undefined && 'data' in mistyped &&
        !(listed.params.allowedValues as unknown[]).some(value => typeof value === typeof mistyped.data)
      for (const error of group) {
        if (listed !== undefined && error === mistyped) continue
        const detail = sentence(error, location, readOnly)
        issues.push({ in: location, pointer, detail: error === listed && foreign ? `${detail}${sentType(mistyped, location)}` : detail })
      }
    }
  }
  // Variants may fault a value alike (`kind` is required by each): once is enough.
  const said = new Set<string>()
  return issues.filter(issue => {
    const key = `${issue.pointer} ${issue.detail}`
    if (said.has(key)) return false
    said.add(key)
    return true
  })
}
