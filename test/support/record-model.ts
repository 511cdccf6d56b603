// What the contract says a collection holds and answers, computed from plain records in memory:
// the model a randomized test compares the service with.
import type { Json } from '../helper.js'

/** RFC 7396: members of `patch` replace those of `target`, null removes one, objects merge member by member. */
export function mergePatch (target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch
  const result: Json = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target as Json } : {}
  for (const [key, value] of Object.entries(patch as Json)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }
  return result
}

/** The members of `record` that are writable fields. */
export function writableOf (record: Json, fields: readonly string[]): Json {
  return Object.fromEntries(fields.filter(field => record[field] !== undefined).map(field => [field, record[field]]))
}

/** A sort key as `sort=` takes it, and whether it is descending. */
export type SortKey = readonly [field: string, descending: boolean]

/**
 * The ids of `records` in the contract's order: each key in turn, missing
 * values last in either direction, strings by code point, ties by id in the
 * direction of the last key.
 */
export function sortedIds (records: readonly Json[], keys: readonly SortKey[]): number[] {
  const lastDescending = keys.at(-1)?.[1] ?? false
  const compare = (a: Json, b: Json): number => {
    for (const [field, descending] of keys) {
      const x = a[field] as unknown
      const y = b[field] as unknown
      if (x === undefined && y === undefined) continue
      if (x === undefined) return 1
      if (y === undefined) return -1
      // UTF-8 byte order is code point order.
      const order = typeof x === 'string' ? Buffer.compare(Buffer.from(x), Buffer.from(y as string)) : Number(x) - Number(y)
      if (order !== 0) return descending ? -order : order
    }
    return lastDescending ? b.id - a.id : a.id - b.id
  }
  return [...records].sort(compare).map(record => record.id as number)
}

export type FilterOperator = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in' | 'like'

/** `like` with `*` as the only wildcard, case-insensitive. */
function likePattern (pattern: string): RegExp {
  const parts = pattern.toLowerCase().split('*').map(part => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${parts.join('.*')}$`, 's')
}

/**
 * Whether a stored value passes `{field}[op]=values`. `ne` also matches a
 * record without a value (README); every other operator needs one.
 */
export function passes (value: unknown, op: FilterOperator, values: readonly unknown[]): boolean {
  const [first] = values
  if (op === 'ne') return value !== first
  if (value === undefined) return false
  const ordered = value as number | string
  switch (op) {
    case 'eq': return value === first
    case 'in': return values.includes(value)
    case 'lt': return ordered < (first as typeof ordered)
    case 'lte': return ordered <= (first as typeof ordered)
    case 'gt': return ordered > (first as typeof ordered)
    case 'gte': return ordered >= (first as typeof ordered)
    case 'like': return likePattern(String(first)).test(String(value).toLowerCase())
  }
}
