/**
 * What to tell a client about a query parameter its route does not declare.
 * "is not a known property" leaves a client guessing between a typo, an
 * operator that does not exist and a field that cannot be filtered; this
 * says which, and names what would work. It is read off the route's own
 * query schema, so it names exactly the parameters the OpenAPI document lists.
 */

/** `field[op]`, or a bare `field` (which means `field[eq]`). */
const FIELD_FILTER = /^([^[\]]+)(?:\[([^[\]]*)\])?$/

/** A query parameter's name read as a field filter: the field, and the operator when one is written. */
export function fieldFilterOf (name: string): { readonly field: string, readonly op: string | undefined } | undefined {
  const match = FIELD_FILTER.exec(name)
  return match === null ? undefined : { field: match[1]!, op: match[2] }
}

/** The route's query parameters, split into plain ones and filterable fields with their operators. */
export interface DeclaredParameters {
  readonly plain: readonly string[]
  readonly operators: ReadonlyMap<string, readonly string[]>
}

export function declaredParameters (names: readonly string[]): DeclaredParameters {
  const operators = new Map<string, string[]>()
  for (const name of names) {
    const filter = fieldFilterOf(name)
    if (filter?.op === undefined) continue
    operators.set(filter.field, [...operators.get(filter.field) ?? [], filter.op])
  }
  return { plain: names.filter(name => fieldFilterOf(name)?.op === undefined && !operators.has(name)), operators }
}

function filterableFields (declared: DeclaredParameters): string {
  const fields = [...declared.operators.keys()]
  return fields.length === 0 ? 'nothing here can be filtered' : `filterable fields: ${fields.join(', ')}`
}

export function unknownParameterSentence (name: string, declared: DeclaredParameters): string {
  const filter = fieldFilterOf(name)
  if (filter?.op !== undefined) {
    const { field, op } = filter
    const operators = declared.operators.get(field)
    return operators === undefined
      ? `is not a filter: ${field} cannot be filtered; ${filterableFields(declared)}`
      : `is not a filter: ${field} has no operator "${op}"; use one of ${operators.join(', ')}`
  }
  const known = [...declared.plain, ...declared.operators.keys()]
  if (known.length === 0) return 'is not a parameter of this route, which takes none'
  return declared.operators.size === 0
    ? `is not a known parameter; known: ${known.join(', ')}`
    : `is not a known parameter; known: ${declared.plain.join(', ')}; ${filterableFields(declared)} (also as field[op])`
}
