/**
 * A field's schema as the engine uses it everywhere (validation, storage
 * kind, filters, the document): TypeBox's spellings turned into the plain
 * JSON Schema they mean for a field, at any depth.
 */
import type { TSchema } from '@sinclair/typebox'

/** The one JSON type of a closed set of literals, when they share one: strings, or numbers (integers when all are). */
function literalsType (options: readonly TSchema[]): 'string' | 'integer' | 'number' | undefined {
  const values = options.map(option => option.const as unknown)
  if (values.every(value => typeof value === 'string')) return 'string'
  if (!values.every(value => typeof value === 'number' && Number.isFinite(value))) return undefined
  return values.every(value => Number.isSafeInteger(value)) ? 'integer' : 'number'
}

const normalizeAll = (schemas: Record<string, TSchema>): Record<string, TSchema> =>
  Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, normalizeSchema(schema)]))

/**
 * - A closed set of strings or numbers, which TypeBox spells as a union of
 *   literals (`anyOf` of `const`s; `Type.Enum` of a TypeScript enum too),
 *   becomes one `enum`: clearer validation messages, cleaner OpenAPI
 *   (generated clients see one union of strings or numbers), and a column of
 *   its type, which can be filtered and sorted, rather than JSON text.
 * - An object with declared members is closed (`additionalProperties: false`)
 *   unless it says otherwise: TypeBox leaves `Type.Object` open, so a member
 *   the definition never declared was stored and then left out of every
 *   representation, a value silently dropped. It is a 400 instead, as at the
 *   top level.
 * - An integer without bounds of its own keeps to the safe range: JSON numbers
 *   beyond 2^53 reach JavaScript rounded (9007199254740993 → …992), so such a
 *   number would be stored changed.
 */
export function normalizeSchema (schema: TSchema): TSchema {
  const options = schema.anyOf as TSchema[] | undefined
  const type = Array.isArray(options) && options.length > 0 ? literalsType(options) : undefined
  if (type !== undefined) {
    const { anyOf: _anyOf, ...rest } = schema
    return { ...rest, type, enum: options!.map(option => option.const as string | number) } as TSchema
  }
  const result: TSchema = { ...schema }
  if (schema.type === 'integer') {
    if (schema.minimum === undefined && schema.exclusiveMinimum === undefined) result.minimum = Number.MIN_SAFE_INTEGER
    if (schema.maximum === undefined && schema.exclusiveMaximum === undefined) result.maximum = Number.MAX_SAFE_INTEGER
  }
  if (schema.properties !== undefined) {
    result.properties = normalizeAll(schema.properties as Record<string, TSchema>)
    if (schema.additionalProperties === undefined) result.additionalProperties = false
  }
  if (schema.patternProperties !== undefined) result.patternProperties = normalizeAll(schema.patternProperties as Record<string, TSchema>)
  if (typeof schema.additionalProperties === 'object') result.additionalProperties = normalizeSchema(schema.additionalProperties as TSchema)
  // One schema for every item, or one per position (a tuple).
  if (schema.items !== undefined) result.items = Array.isArray(schema.items) ? (schema.items as TSchema[]).map(normalizeSchema) : normalizeSchema(schema.items as TSchema)
  if (Array.isArray(options)) result.anyOf = options.map(normalizeSchema)
  return result
}
