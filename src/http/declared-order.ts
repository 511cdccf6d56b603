/**
 * Members in the order the schema declares them. fast-json-stringify writes an
 * object's required properties first and its optional ones after, so a
 * project read alone came as `…, links, createdAt, updatedAt, description,
 * budget` (its optional fields last), and in a list, where only id and links
 * are required (sparse fieldsets), as `id, links, name, …`: the same record in
 * two orders, neither the document's. Serializers are compiled from the
 * schemas without `required`, so every answer lists members as declared.
 * What `required` guarded there (a 500 for a missing member) the schemas
 * still say in the document, and the tests hold every body to it.
 */

type Schema = Record<string, unknown>

/** Keywords whose value is a map of names to subschemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions'])
/** Keywords whose value is one subschema, or (allOf) a list of them, all of which apply. */
const SUBSCHEMAS = new Set(['items', 'additionalProperties', 'allOf'])

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * `schema` and the schemas that always apply inside it without `required`;
 * names of properties, whatever they are, are left alone. Not inside
 * anyOf / oneOf / if / not: fast-json-stringify picks a branch by validating
 * against each, and `required` may be what tells two object branches apart.
 */
export function withoutRequired<T> (schema: T): T {
  if (Array.isArray(schema)) return schema.map(item => withoutRequired(item as unknown)) as T
  if (!isSchema(schema)) return schema
  const copy: Schema = {}
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'required' && Array.isArray(value)) continue
    if (SCHEMA_MAPS.has(keyword) && isSchema(value)) {
      copy[keyword] = Object.fromEntries(Object.entries(value).map(([name, subschema]) => [name, withoutRequired(subschema)]))
    } else {
      copy[keyword] = SUBSCHEMAS.has(keyword) ? withoutRequired(value) : value
    }
  }
  return copy as T
}

/** Each shared schema (by `$id`) without `required`, as above. */
export function sharedWithoutRequired (schemas: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, withoutRequired(schema)]))
}
