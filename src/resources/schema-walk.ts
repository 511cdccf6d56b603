/**
 * Walking a field's JSON Schema: the checks made when a definition loads look
 * inside object members, array items and union variants, not only at the
 * field's own schema.
 */
import type { TSchema } from '@sinclair/typebox'

/** The schemas directly inside `schema`: members, items, variants. */
function innerSchemas (schema: TSchema): TSchema[] {
  const inner: unknown[] = [
    ...Object.values((schema.properties ?? {}) as Record<string, unknown>),
    ...Object.values((schema.patternProperties ?? {}) as Record<string, unknown>),
    ...[schema.items].flat(),
    ...(Array.isArray(schema.prefixItems) ? schema.prefixItems as unknown[] : []),
    schema.additionalProperties,
    ...['anyOf', 'oneOf', 'allOf'].flatMap(keyword => Array.isArray(schema[keyword]) ? schema[keyword] as unknown[] : [])
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
