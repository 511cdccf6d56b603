/**
 * What a JSON Merge Patch (RFC 7396) may send for a value of a schema. The
 * patch is merged into the stored value member by member, so for an object it
 * need not be a whole valid object: each member may be left out (unchanged) or
 * null (removed), a member the object does not declare may only be null
 * (removing what is not there changes nothing), and the object's own
 * `required` and property-count bounds apply to the merged result, which is
 * checked before it is stored (merged-check.ts). A record (members named by
pattern) is patched the same way. A union takes any of its
 * members' forms. Any other value replaces the stored one whole, so it is
 * given by the schema itself. Defaults are left out at every depth: filled
 * into the patch, they would overwrite stored values the client never named.
 */
import { Type, type TSchema } from '@sinclair/typebox'

type Schema = TSchema & {
  type?: unknown
  properties?: Record<string, TSchema>
  patternProperties?: Record<string, TSchema>
  additionalProperties?: boolean | TSchema
  anyOf?: TSchema[]
}

/** The keywords that describe a whole object, which a patch of it need not satisfy. */
function withoutWholeObjectKeywords ({ default: _default, required: _required, minProperties: _min, maxProperties: _max, ...rest }: Schema): Schema {
  return rest
}

const orNull = (schema: TSchema): TSchema => Type.Union([schema, Type.Null()])

/** Each member's form, or null. */
function membersOrNull (members: Record<string, TSchema>): Record<string, TSchema> {
  return Object.fromEntries(Object.entries(members).map(([name, member]) => [name, orNull(mergePatchForm(member))]))
}

export function mergePatchForm (schema: TSchema): TSchema {
  const { default: _default, ...value } = schema as Schema
  if (value.anyOf !== undefined) return { ...value, anyOf: value.anyOf.map(mergePatchForm) }
  // An object with declared members, or a record (TypeBox's Type.Record: members by pattern).
  if (value.type !== 'object' || (value.properties === undefined && value.patternProperties === undefined)) return value
  const extra = value.additionalProperties
  return {
    ...withoutWholeObjectKeywords(value),
    ...(value.properties === undefined ? {} : { properties: membersOrNull(value.properties) }),
    ...(value.patternProperties === undefined ? {} : { patternProperties: membersOrNull(value.patternProperties) }),
    ...(extra === undefined || extra === true ? {} : { additionalProperties: extra === false ? Type.Null() : orNull(mergePatchForm(extra)) })
  }
}
