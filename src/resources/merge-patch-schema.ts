/**
 * What a JSON Merge Patch (RFC 7396) may send for a value of a schema. The
 * patch is merged into the stored value member by member, so for an object it
 * need not be a whole valid object: each member may be left out (unchanged) or
 * null (removed), a member the object does not declare may only be null
 * (removing what is not there changes nothing), and the object's own
 * `required` and property-count bounds apply to the merged result, which is
 * checked before it is stored (merged-check.ts). A union takes any of its
 * members' forms. Any other value replaces the stored one whole, so it is
 * given by the schema itself. Defaults are left out at every depth: filled
 * into the patch, they would overwrite stored values the client never named.
 */
import { Type, type TSchema } from '@sinclair/typebox'

type Schema = TSchema & {
  type?: unknown
  properties?: Record<string, TSchema>
  additionalProperties?: boolean | TSchema
  anyOf?: TSchema[]
}

/** The keywords that describe a whole object, which a patch of it need not satisfy. */
function withoutWholeObjectKeywords ({ default: _default, required: _required, minProperties: _min, maxProperties: _max, ...rest }: Schema): Schema {
  return rest
}

const orNull = (schema: TSchema): TSchema => Type.Union([schema, Type.Null()])

export function mergePatchForm (schema: TSchema): TSchema {
  const { default: _default, ...value } = schema as Schema
  if (value.anyOf !== undefined) return { ...value, anyOf: value.anyOf.map(mergePatchForm) }
  if (value.type !== 'object' || value.properties === undefined) return value
  const properties: Record<string, TSchema> = {}
  for (const [name, property] of Object.entries(value.properties)) properties[name] = orNull(mergePatchForm(property))
  const extra = value.additionalProperties
  return {
    ...withoutWholeObjectKeywords(value),
    properties,
    additionalProperties: extra === false ? Type.Null() : extra === undefined || extra === true ? true : orNull(mergePatchForm(extra))
  }
}
