/**
 * A field's schema as the engine uses it everywhere (validation, storage
 * kind, filters, the document): TypeBox's spellings turned into the plain
 * JSON Schema they mean for a field, at any depth.
 */
import type { TSchema } from '@sinclair/typebox'
import { mapSchema } from './schema-walk.js'

/** The one JSON type of a closed set of literals, when they share one: strings, or numbers (integers when all are). */
function literalsType (options: readonly TSchema[]): 'string' | 'integer' | 'number' | undefined {
  const values = options.map(option => option.const as unknown)
  if (values.every(value => typeof value === 'string')) return 'string'
  if (!values.every(value => typeof value === 'number' && Number.isFinite(value))) return undefined
  return values.every(value => Number.isSafeInteger(value)) ? 'integer' : 'number'
}

/**
 * A closed set of strings or numbers, which TypeBox spells as a union of
 * literals (`anyOf` of `const`s; `Type.Enum` of a TypeScript enum too), as one
 * `enum`: clearer validation messages, cleaner OpenAPI (generated clients see
 * one union of strings or numbers), and a column of its type, which can be
 * filtered and sorted, rather than JSON text.
 */
function literalsAsEnum (schema: TSchema): TSchema {
  const options = schema.anyOf as TSchema[] | undefined
  const type = Array.isArray(options) && options.length > 0 ? literalsType(options) : undefined
  if (type === undefined) return schema
  const { anyOf: _anyOf, ...rest } = schema
  return { ...rest, type, enum: options!.map(option => option.const as string | number) } as TSchema
}

/**
 * An object with declared members, closed (`additionalProperties: false`)
 * unless it says otherwise: TypeBox leaves `Type.Object` open, so a member the
 * definition never declared was stored and then left out of every
 * representation, a value silently dropped. It is a 400 instead, as at the
 * top level.
 */
function closed (schema: TSchema): TSchema {
  return schema.properties !== undefined && schema.additionalProperties === undefined ? { ...schema, additionalProperties: false } : schema
}

/**
 * An integer without bounds of its own, kept to the safe range: JSON numbers
 * beyond 2^53 reach JavaScript rounded (9007199254740993 → …992), so such a
 * number would be stored changed.
 */
function safeInteger (schema: TSchema): TSchema {
  // A set of integers is bounded by its members.
  if (schema.type !== 'integer' || schema.enum !== undefined) return schema
  return {
    ...schema,
    ...(schema.minimum === undefined && schema.exclusiveMinimum === undefined ? { minimum: Number.MIN_SAFE_INTEGER } : {}),
    ...(schema.maximum === undefined && schema.exclusiveMaximum === undefined ? { maximum: Number.MAX_SAFE_INTEGER } : {})
  }
}

export const normalizeSchema = (schema: TSchema): TSchema => mapSchema(schema, inner => safeInteger(closed(literalsAsEnum(inner))))
