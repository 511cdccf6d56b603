/**
 * Whether a named filter's values are ones its field can hold. A value of
 * another type compared differently on each database: `where('active', 'eq',
 * 'yes')` matched nothing on SQLite (a boolean is 1 or 0 there) and every
 * active row on PostgreSQL (which reads 'yes' as true). Checked at load
 * (model.ts), with the sample context for filters computed per request.
 */
import type { Condition } from './define.js'
import type { Field } from './model.js'

/** What the values of a field's column are, for the message. */
function kindOf (field: Field | undefined, column: string): string {
  if (field === undefined) return column === 'id' ? 'an integer id' : 'a string'
  const values = (field.schema as { enum?: unknown[] }).enum
  if (values !== undefined) return `one of ${values.map(value => JSON.stringify(value)).join(', ')}`
  return field.kind === 'integer' ? 'an integer' : `a ${field.kind}`
}

/** Whether the column of `field` (or, without a field, an engine column: id, timestamps, owner) can hold `value`. */
function fits (field: Field | undefined, column: string, value: unknown): boolean {
  if (field === undefined) return column === 'id' ? Number.isSafeInteger(value) : typeof value === 'string'
  const values = (field.schema as { enum?: unknown[] }).enum
  if (values !== undefined) return values.includes(value)
  switch (field.kind) {
    case 'string': return typeof value === 'string'
    case 'integer': return Number.isSafeInteger(value)
    case 'number': return typeof value === 'number' && Number.isFinite(value)
    case 'boolean': return typeof value === 'boolean'
    // Object and array columns hold JSON text, compared as such.
    default: return true
  }
}

/** What is wrong with one condition of a named filter, if anything. */
export function conditionFault (fields: ReadonlyMap<string, Field>, { field: column, op, value }: Condition): string | undefined {
  if (op === 'like') return typeof value === 'string' ? undefined : `compares "${column}" by like, which takes a string with * as its wildcard`
  if (op === 'in' && !(Array.isArray(value) && value.length > 0)) return `compares "${column}" by in, which takes a non-empty array`
  const field = fields.get(column)
  const items = op === 'in' ? value as unknown[] : [value]
  const index = items.findIndex(item => !fits(field, column, item))
  if (index < 0) return undefined
  const unfit = items[index]
  if (unfit === null || unfit === undefined) return `compares "${column}" with ${String(unfit)}, which no row holds: a record without a value is matched only by ne`
  return `compares "${column}" with ${JSON.stringify(unfit)}, but it holds ${kindOf(field, column)}`
}
