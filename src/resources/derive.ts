/**
 * Definition → the JSON schemas of a resource: its representation and the
 * create, replace and merge-patch bodies. Every schema has a stable `$id`
 * (`Project`, `ProjectCreate`, …) so it is registered once and referenced by
 * routes and by the OpenAPI document alike.
 */
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import { isDeprecated } from './deprecation.js'
import { EXAMPLE_ID, EXAMPLE_TIME } from './header-examples.js'
import { represent } from './links.js'
import { mergePatchForm } from './merge-patch-schema.js'
import { DefinitionError } from './define.js'
import { pascal, type Field, type Model, type Resource } from './model.js'

export const MAX_ID = Number.MAX_SAFE_INTEGER

export interface ResourceSchemaIds {
  readonly representation: string
  /** A list item: the representation with only id and links guaranteed (sparse fieldsets). */
  readonly sparse: string
  readonly create: string
  readonly replace: string
  readonly patch: string
}

export function schemaIds (resource: Resource): ResourceSchemaIds {
  const stem = resource.typeName
  return { representation: stem, sparse: `${stem}Sparse`, create: `${stem}Create`, replace: `${stem}Replace`, patch: `${stem}Patch` }
}

/**
 * The id of the body schema for creating `child` through `/v1/{parent}/{id}/{relation}`,
 * which leaves out `foreignKey`. A child with two keys to one parent (a book's
 * author and editor) has a body for each, named by its key.
 */
export function nestedCreateId (child: Resource, parent: Resource, foreignKey: string): string {
  const id = `${child.typeName}CreateIn${parent.typeName}`
  return child.parents.filter(link => link.parent === parent.collection).length > 1 ? `${id}By${pascal(foreignKey)}` : id
}

export const Id = Type.Integer({ minimum: 1, maximum: MAX_ID, description: 'Assigned by the service.' })
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC, with milliseconds.' })
/** The path of a record's routes: its id, shown as the one the problem examples are about. */
export const IdParams = Type.Object({ id: { ...Id, examples: [EXAMPLE_ID] } }, { additionalProperties: false })

/** A copy of a field schema without `default`, for places where defaults must not be applied. */
function withoutDefault (schema: TSchema): TSchema {
  const { default: _ignored, ...rest } = schema
  return rest as TSchema
}

function linksSchema (resource: Resource): TObject {
  const properties: TProperties = { self: Type.String({ description: `This ${resource.singular}.` }) }
  for (const child of resource.children) {
    properties[child.name] = Type.String({ description: `The ${child.child} of this ${resource.singular}.` })
  }
  for (const parent of resource.parents) {
    properties[parent.name] = Type.Optional(Type.String({ description: `The ${parent.name} this ${resource.singular} belongs to; absent when ${parent.foreignKey} is not set.` }))
  }
  return Type.Object(properties, { additionalProperties: false, readOnly: true, description: 'Relation name → canonical path.' })
}

/** Read-only properties a client may echo back unchanged on PUT / PATCH. */
function echoableReadOnly (resource: Resource): TProperties {
  const properties: TProperties = {
    id: Type.Optional(Type.Integer({ readOnly: true })),
    links: Type.Optional(Type.Object({}, { readOnly: true, additionalProperties: Type.String() })),
    createdAt: Type.Optional(Type.String({ readOnly: true })),
    updatedAt: Type.Optional(Type.String({ readOnly: true }))
  }
  if (resource.owner !== undefined) properties[resource.owner] = Type.Optional(Type.String({ readOnly: true }))
  return properties
}

/** The names a client must never set (POST) or change (PUT / PATCH). */
export function readOnlyNames (resource: Resource): string[] {
  return ['id', 'links', 'createdAt', 'updatedAt', ...(resource.owner === undefined ? [] : [resource.owner])]
}

/** A record of `resource` as the document shows it, made from its definition's example (defaults filled) as a stored record is represented: undefined without one. */
export function representationExample (resource: Resource): Record<string, unknown> | undefined {
  const example = resource.definition.example as Record<string, unknown> | undefined
  if (example === undefined) return undefined
  const values: Record<string, unknown> = {}
  for (const field of resource.fields.values()) {
    const value = example[field.name] ?? (field.hasDefault ? field.default : undefined)
    if (value !== undefined) values[field.name] = value
  }
  return represent(resource, { id: EXAMPLE_ID, version: 1, createdAt: EXAMPLE_TIME, updatedAt: EXAMPLE_TIME, values })
}

export function representationSchema (resource: Resource): TObject {
  const properties: TProperties = { id: { ...Id, readOnly: true } }
  for (const field of resource.fields.values()) {
    if (field.writeOnly) continue
    // A defaulted field always has a value, so clients may rely on it being present.
    const schema = withoutDefault(field.schema)
    properties[field.name] = field.required || field.hasDefault ? schema : Type.Optional(schema)
  }
  if (resource.owner !== undefined) {
    properties[resource.owner] = Type.Optional(Type.String({ readOnly: true, description: 'Subject of the credential that created it.' }))
  }
  properties.links = linksSchema(resource)
  properties.createdAt = { ...Timestamp, readOnly: true }
  properties.updatedAt = { ...Timestamp, readOnly: true }
  const example = representationExample(resource)
  return Type.Object(properties, {
    $id: schemaIds(resource).representation,
    additionalProperties: false,
    description: resource.definition.description,
    ...(isDeprecated(resource.definition.deprecated) ? { deprecated: true } : {}),
    ...(example === undefined ? {} : { examples: [example] })
  })
}

/** A list page's body: its items, which may be sparse. */
export const pageSchema = (resource: Resource): TSchema => Type.Array(Type.Ref(schemaIds(resource).sparse))

/** The representation with only id and links required, for lists that may be sparse (`fields=`). */
function sparseSchema (resource: Resource, representation: TObject): TObject {
  const schema = Type.Object(representation.properties, {
    $id: schemaIds(resource).sparse,
    additionalProperties: false,
    ...(representation.examples === undefined ? {} : { examples: representation.examples }),
    description: `A ${resource.singular} in a list: every field is present unless \`fields\` asked for fewer; id and links always are.`
  })
  // TypeBox derives `required` from the properties; a sparse item promises only these two.
  return { ...schema, required: ['id', 'links'] }
}

function writableProperties (resource: Resource, map: (field: Field) => TSchema): TProperties {
  const properties: TProperties = {}
  for (const field of resource.fields.values()) properties[field.name] = map(field)
  return properties
}

/** A defaulted field may be left out of a body (it then gets its default), so it is optional there. */
const asDeclared = (field: Field): TSchema => field.required && !field.hasDefault ? field.schema : Type.Optional(field.schema)

/**
 * PUT property: as declared, except that a write-only field may be left out and
 * then keeps its stored value (no default applied): a client never reads it, so
 * a GET body edited and PUT back must not remove it.
 */
const asReplaced = (field: Field): TSchema => field.writeOnly ? Type.Optional(withoutDefault(field.schema)) : asDeclared(field)

/** Merge-patch property: absent = unchanged; `null` = remove (optional) or reset (defaulted). */
function patchProperty (field: Field): TSchema {
  const schema = mergePatchForm(field.schema)
  const nullable = !field.required || field.hasDefault
  return Type.Optional(nullable ? Type.Union([schema, Type.Null()]) : schema)
}

const hasWriteOnly = (resource: Resource): boolean => [...resource.fields.values()].some(field => field.writeOnly)

export function deriveSchemas (resource: Resource): TObject[] {
  const ids = schemaIds(resource)
  const example = resource.definition.example
  const examples = example === undefined ? {} : { examples: [example] }
  const representation = representationSchema(resource)
  return [
    representation,
    sparseSchema(resource, representation),
    Type.Object(writableProperties(resource, asDeclared), {
      $id: ids.create, additionalProperties: false, description: `A new ${resource.singular}.`, ...examples
    }),
    Type.Object({ ...writableProperties(resource, asReplaced), ...echoableReadOnly(resource) }, {
      $id: ids.replace,
      additionalProperties: false,
      description: `Every writable field of the ${resource.singular}: a missing optional field is removed, a missing defaulted field is reset${hasWriteOnly(resource) ? ', a missing write-only field keeps its stored value' : ''}. Read-only fields may be echoed back unchanged.`,
      ...examples
    }),
    Type.Object({ ...writableProperties(resource, patchProperty), ...echoableReadOnly(resource) }, {
      $id: ids.patch,
      additionalProperties: false,
      description: `JSON Merge Patch (RFC 7396) of a ${resource.singular}: absent fields stay, null removes an optional field or restores a default.`,
      ...(example === undefined ? {} : { examples: [patchExample(resource, example)] })
    })
  ]
}

/** A merge patch changing one field of the example: the first that is neither the name nor a foreign key, else the name. */
function patchExample (resource: Resource, example: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const keys = new Set(resource.parents.map(link => link.foreignKey))
  const [field, value] = Object.entries(example).find(([name]) => name !== 'name' && !keys.has(name)) ?? ['name', example.name]
  return { [field]: value }
}

/**
 * Create bodies for related collections: the child's create schema, with the
 * foreign key optional, since the path gives it. A body copied from a record
 * may still carry it, as long as it names the parent in the path (handlers.ts).
 */
export function deriveNestedSchemas (model: Model, resource: Resource): TObject[] {
  return resource.parents.map(link => {
    const parent = model.get(link.parent)
    const properties = writableProperties(resource, asDeclared)
    const key = resource.fields.get(link.foreignKey)!
    properties[link.foreignKey] = Type.Optional({ ...withoutDefault(key.schema), description: `Comes from the path: leave it out, or send the id of the ${parent.singular} in the path.` })
    const { [link.foreignKey]: _fromPath, ...example } = resource.definition.example ?? {}
    return Type.Object(properties, {
      $id: nestedCreateId(resource, parent, link.foreignKey),
      additionalProperties: false,
      description: `A new ${resource.singular} in a ${parent.singular}; ${link.foreignKey} comes from the path.`,
      ...(resource.definition.example === undefined ? {} : { examples: [example] })
    })
  })
}

/**
 * Every resource's schemas, refused when one would take an `$id` (an OpenAPI
 * component name) already taken: by another resource whose singular reads
 * alike, or by the engine's own (`Client`, `Webhook`, `Problem`…).
 */
export function resourceSchemas (model: Model, engineSchemas: readonly TSchema[]): TObject[] {
  const owners = new Map<string, string>(engineSchemas.map(schema => [String(schema.$id), 'the engine\'s own']))
  const schemas: TObject[] = []
  for (const resource of model.resources) {
    for (const schema of [...deriveSchemas(resource), ...deriveNestedSchemas(model, resource)]) {
      const id = String(schema.$id)
      const owner = owners.get(id)
      if (owner !== undefined) throw new DefinitionError(`resource "${resource.collection}": its schema "${id}" is ${owner} too; give the resource another singular`)
      owners.set(id, `resource "${resource.collection}"'s`)
      schemas.push(schema)
    }
  }
  return schemas
}
