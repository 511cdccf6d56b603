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
  message?: string
}

const list = (values: unknown[]): string => values.map(value => JSON.stringify(value)).join(', ')

function pointerOf (error: AjvError): string {
  if (error.keyword === 'required') return `${error.instancePath}/${String(error.params.missingProperty)}`
  if (error.keyword === 'additionalProperties') return `${error.instancePath}/${String(error.params.additionalProperty)}`
  return error.instancePath
}

function sentence (error: AjvError, readOnly: readonly string[]): string {
  const { params } = error
  switch (error.keyword) {
    case 'required': return 'is required'
    case 'additionalProperties':
      return error.instancePath === '' && readOnly.includes(String(params.additionalProperty))
        ? 'is read-only and cannot be set'
        : 'is not a known property'
    case 'enum': return `must be one of ${list(params.allowedValues as unknown[])}`
    case 'const': return `must be ${JSON.stringify(params.allowedValue)}`
    case 'type': return `must be ${String(params.type).replace(',', ' or ')}`
    case 'format': return `must be a valid ${String(params.format)}`
    default: return error.message ?? 'is invalid'
  }
}

/** Within a union, the errors of the branch of the right type explain best; type mismatches least. */
function unionSentence (errors: AjvError[], readOnly: readonly string[]): string {
  const branches = errors.filter(error => error.keyword !== 'anyOf' && error.keyword !== 'oneOf')
  const specific = branches.filter(error => error.keyword !== 'type' && error.keyword !== 'const' && error.keyword !== 'enum')
  if (specific.length > 0) return sentence(specific[0]!, readOnly)
  const allowed = branches.flatMap(error => {
    if (error.keyword === 'const') return [error.params.allowedValue]
    if (error.keyword === 'enum') return error.params.allowedValues as unknown[]
    return []
  })
  const types = branches.filter(error => error.keyword === 'type').map(error => String(error.params.type))
  const parts = [...(allowed.length > 0 ? [`one of ${list(allowed)}`] : []), ...types]
  return parts.length > 0 ? `must be ${parts.join(' or ')}` : 'does not match any allowed form'
}

export function describeAjvErrors (errors: readonly AjvError[], location: IssueLocation, readOnly: readonly string[]): ProblemIssue[] {
  const byPointer = new Map<string, AjvError[]>()
  for (const error of errors) {
    const pointer = pointerOf(error)
    const group = byPointer.get(pointer) ?? []
    group.push(error)
    byPointer.set(pointer, group)
  }
  const issues: ProblemIssue[] = []
  for (const [pointer, group] of byPointer) {
    const isUnion = group.some(error => error.keyword === 'anyOf' || error.keyword === 'oneOf')
    if (isUnion) {
      issues.push({ in: location, pointer, detail: unionSentence(group, readOnly) })
    } else {
      for (const error of group) issues.push({ in: location, pointer, detail: sentence(error, readOnly) })
    }
  }
  return issues
}
