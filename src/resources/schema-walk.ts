/**
 * Walking a field's JSON Schema: the checks made when a definition loads look
 * inside object members, array items and union variants, not only at the
 * field's own schema, and normalisation rebuilds it at every depth.
 */
import type { TSchema } from '@sinclair/typebox'

/** Keywords that hold a list of schemas: a tuple's positions, a union's or intersection's variants. */
const SCHEMA_LISTS = ['prefixItems', 'anyOf', 'oneOf', 'allOf'] as const

/** The schemas directly inside `schema`: members, items, variants (the same places `mapSchema` rebuilds). */
function innerSchemas (schema: TSchema): TSchema[] {
  const inner: unknown[] = [
    ...Object.values((schema.properties ?? {}) as Record<string, unknown>),
    ...Object.values((schema.patternProperties ?? {}) as Record<string, unknown>),
    ...[schema.items].flat(),
    schema.additionalProperties,
    ...SCHEMA_LISTS.flatMap(keyword => Array.isArray(schema[keyword]) ? schema[keyword] as unknown[] : [])
  ]
  return inner.filter((value): value is TSchema => typeof value === 'object' && value !== null)
}

/** The first schema inside `schema` (not `schema` itself), at any depth, that `test` holds for. */
export function findInside (schema: TSchema, test: (inner: TSchema) => boolean): TSchema | undefined {
  for (const inner of innerSchemas(schema)) {
    const found = test(inner) ? inner : findInside(inner, test)
    if (found !== undefined) return found
  }
  return undefined
}

/** `schema` itself when `test` holds for it, else the first schema inside it that `test` holds for. */
export function findWithin (schema: TSchema, test: (inner: TSchema) => boolean): TSchema | undefined {
  return test(schema) ? schema : findInside(schema, test)
}

/** `schema` and every schema inside it, at any depth. */
export function schemasWithin (schema: TSchema): TSchema[] {
  return [schema, ...innerSchemas(schema).flatMap(schemasWithin)]
}

const mapMembers = (members: Record<string, TSchema>, transform: (schema: TSchema) => TSchema): Record<string, TSchema> =>
  Object.fromEntries(Object.entries(members).map(([name, member]) => [name, mapSchema(member, transform)]))

/**
 * `schema` rebuilt with `transform` applied to every schema inside it
 * (members, items, variants), innermost first, and then to itself. TypeBox's
 * marks (symbol keys) are kept.
 */
export function mapSchema (schema: TSchema, transform: (schema: TSchema) => TSchema): TSchema {
  const result: TSchema = { ...schema }
  if (schema.properties !== undefined) result.properties = mapMembers(schema.properties as Record<string, TSchema>, transform)
  if (schema.patternProperties !== undefined) result.patternProperties = mapMembers(schema.patternProperties as Record<string, TSchema>, transform)
  if (typeof schema.additionalProperties === 'object') result.additionalProperties = mapSchema(schema.additionalProperties as TSchema, transform)
  // One schema for every item, or one per position (a tuple).
  if (schema.items !== undefined) result.items = Array.isArray(schema.items) ? (schema.items as TSchema[]).map(item => mapSchema(item, transform)) : mapSchema(schema.items as TSchema, transform)
  for (const keyword of SCHEMA_LISTS) {
    if (Array.isArray(schema[keyword])) result[keyword] = (schema[keyword] as TSchema[]).map(variant => mapSchema(variant, transform))
  }
  return transform(result)
}
