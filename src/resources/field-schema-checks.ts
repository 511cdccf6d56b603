/**
 * Checks of a definition's field schemas on their own: whether a field
 * declares a type JSON cannot carry, marks itself readOnly, takes null as its
 * own value, refers to other schemas, intersects objects, names a member like
 * every object's own, or bounds itself so that no value fits. Mistakes of the
 * definition, refused when it loads (define.ts), not met by clients as 400s or
 * 500s. Defaults and the example are checked by the validator itself
 * (validator-checks.ts).
 */
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { findWithin } from './schema-walk.js'

/**
 * Whether a field's own value may be null. A column holds a value or nothing,
 * so a null would be stored as nothing and read back absent (a value changed
 * in storage), and a required nullable field would fail its NOT NULL column.
 * Nulls inside an object or array field are kept as sent (JSON).
 */
function allowsNull (schema: TSchema): boolean {
  const { type, anyOf, oneOf, nullable } = schema as { type?: unknown, anyOf?: TSchema[], oneOf?: TSchema[], nullable?: unknown }
  if (type === 'null' || nullable === true || (Array.isArray(type) && type.includes('null'))) return true
  if (schema.const === null || (Array.isArray(schema.enum) && schema.enum.includes(null))) return true
  if ([...anyOf ?? [], ...oneOf ?? []].some(allowsNull)) return true
  // What states no type at all (Type.Unknown, Type.Any) takes null too.
  try {
    return Value.Check(schema, null)
  } catch {
    // A kind TypeBox cannot check (Type.Unsafe): the keywords above are all it can say.
    return false
  }
}

/** Whether `test` holds for the field's schema or one inside it. */
const foundIn = (schema: TSchema, test: (inner: TSchema) => boolean): boolean => findWithin(schema, test) !== undefined

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])
const isJsonType = (type: unknown): boolean => type === undefined || [type].flat().every(name => JSON_TYPES.has(name as string))

/**
 * The type of a value JSON cannot carry that a schema declares: TypeBox's
 * JavaScript types (`Type.Date`, `Type.Uint8Array`, `Type.BigInt`,
 * `Type.Undefined`…), which no request body can hold and no validator of the
 * document knows.
 */
const nonJsonType = (schema: TSchema): string | undefined => isJsonType(schema.type) ? undefined : String(schema.type)

/** Whether a field marks itself, or a value inside it, `readOnly`: nothing but a client writes a field, so the mark would only mislead the document's readers. */
const marksReadOnly = (schema: TSchema): boolean => foundIn(schema, inner => inner.readOnly === true)

/** A schema named or pointed to (`$id`, `$ref`: Type.Recursive, Type.Ref): each field is written into several of the app's schemas, where one `$id` would be declared again and again. */
const refers = (schema: TSchema): boolean => schema.$id !== undefined || schema.$ref !== undefined

/** An intersection of objects (Type.Intersect): it cannot be closed against undeclared members, since each object would refuse the others'. */
const intersectsObjects = (schema: TSchema): boolean => Array.isArray(schema.allOf) && (schema.allOf as TSchema[]).some(branch => branch.type === 'object')

const OBJECT_MEMBERS = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * Whether every JavaScript object already answers to the name (`constructor`,
 * `toString`, `valueOf`…). A field or member so named read as present when
 * left out: Ajv found the inherited function (`/constructor must be string,
 * not function`) and `fields=toString` showed its source text.
 */
export const isObjectMemberName = (name: string): boolean => OBJECT_MEMBERS.has(name)

/** A member of the object the schema describes that bears such a name. */
const memberNamedLikeObjects = (schema: TSchema): string | undefined => Object.keys((schema.properties ?? {}) as object).find(isObjectMemberName)

/** Lower and upper bounds that no value can satisfy both of: a field so bounded would refuse every value sent. */
const BOUND_PAIRS = [['minLength', 'maxLength'], ['minItems', 'maxItems'], ['minProperties', 'maxProperties'], ['minimum', 'maximum']] as const

function contradictoryBounds (schema: TSchema): string | undefined {
  for (const [low, high] of BOUND_PAIRS) {
    if (typeof schema[low] === 'number' && typeof schema[high] === 'number' && schema[low] > schema[high]) return `${low} ${String(schema[low])} > ${high} ${String(schema[high])}`
  }
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema as Record<string, unknown>
  const floor = [minimum, exclusiveMinimum].filter((bound): bound is number => typeof bound === 'number')
  const ceiling = [maximum, exclusiveMaximum].filter((bound): bound is number => typeof bound === 'number')
  const exclusive = typeof exclusiveMinimum === 'number' || typeof exclusiveMaximum === 'number'
  if (exclusive && floor.length > 0 && ceiling.length > 0 && Math.max(...floor) >= Math.min(...ceiling)) return 'its bounds leave no number between them'
  if (Array.isArray(schema.enum) && schema.enum.length === 0) return 'an empty enum'
  return undefined
}

/** What `describe` says of the first schema within the field (itself, or one inside it) it has something to say of. */
function firstWithin (schema: TSchema, describe: (inner: TSchema) => string | undefined): string | undefined {
  const found = findWithin(schema, inner => describe(inner) !== undefined)
  return found === undefined ? undefined : describe(found)
}

/** Each check of a field's schema: what is wrong, said of the field, or undefined. */
const FIELD_CHECKS: ReadonlyArray<(field: string, schema: TSchema) => string | undefined> = [
  (field, schema) => {
    const member = firstWithin(schema, memberNamedLikeObjects)
    return member === undefined ? undefined : `field "${field}" has a member "${member}", a name every JavaScript object already has (Object.prototype.${member}), which would read as present where it is left out: name it otherwise`
  },
  (field, schema) => {
    const bounds = firstWithin(schema, contradictoryBounds)
    return bounds === undefined ? undefined : `field "${field}" can hold no value (${bounds}), so every value sent for it would be refused`
  },
  (field, schema) => foundIn(schema, refers)
    ? `field "${field}" refers to a schema by $id or $ref (Type.Recursive, Type.Ref), which cannot be placed in the schemas derived from the definition: write the field's schema out in full, to the depth it takes`
    : undefined,
  (field, schema) => foundIn(schema, intersectsObjects)
    ? `field "${field}" is an intersection of objects (Type.Intersect), which cannot refuse members it does not declare, so they would be stored and then left out of every representation: compose the objects with Type.Composite([...]) instead`
    : undefined,
  (field, schema) => {
    const type = firstWithin(schema, nonJsonType)
    return type === undefined ? undefined : `field "${field}" declares type "${type}", which JSON cannot carry: use JSON's types (Type.String, Type.Number, Type.Integer, Type.Boolean, Type.Object, Type.Array); a date or an instant is Type.String({ format: 'date' }) or Type.String({ format: 'date-time' })`
  },
  (field, schema) => marksReadOnly(schema)
    ? `field "${field}" is marked readOnly, but the fields are what clients write, and nothing else would set it; the engine's read-only fields are id, links, createdAt, updatedAt and the owner`
    : undefined,
  (field, schema) => allowsNull(schema)
    ? `field "${field}" allows null, but a record without a value simply lacks the field (and a merge patch's null removes it): declare it Type.Optional(…) of the types it takes, without null (Type.Unknown and Type.Any take null too)`
    : undefined
]

/** What is wrong with a field's own schema, if anything (the first of FIELD_CHECKS to find a fault). */
export function fieldSchemaFault (field: string, schema: TSchema): string | undefined {
  for (const check of FIELD_CHECKS) {
    const fault = check(field, schema)
    if (fault !== undefined) return fault
  }
  return undefined
}
