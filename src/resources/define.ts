/**
 * The vocabulary that `schemas/` uses to describe a resource. This is the only
 * module a resource definition imports besides TypeBox, so it stays small and
 * free of engine internals: it validates and freezes what the author wrote,
 * and everything else is derived from it elsewhere.
 */
import type { Static, TObject, TProperties, TSchema } from '@sinclair/typebox'
import { deprecationFault } from './deprecation-checks.js'
import { fieldSchemaFault, isObjectMemberName } from './field-schema-checks.js'
import { writeOnlyFaults } from './write-only-checks.js'

export type OnDelete = 'restrict' | 'cascade'

export interface HasMany {
  readonly kind: 'has-many'
  /** The child collection, e.g. `tasks`. */
  readonly collection: string
  /** The child's field that holds this resource's id, e.g. `projectId`. */
  readonly foreignKey: string
  /** What deleting this resource does to its children (default `restrict`). */
  readonly onDelete?: OnDelete
}

export interface BelongsTo {
  readonly kind: 'belongs-to'
  /** The parent collection, e.g. `projects`. */
  readonly collection: string
  /** This resource's integer field that holds the parent's id. */
  readonly foreignKey: string
  readonly onDelete?: OnDelete
}

export type Relation = HasMany | BelongsTo

export function hasMany (collection: string, options: { foreignKey: string, onDelete?: OnDelete }): HasMany {
  return Object.freeze({ kind: 'has-many', collection, ...options })
}

export function belongsTo (collection: string, options: { foreignKey: string, onDelete?: OnDelete }): BelongsTo {
  return Object.freeze({ kind: 'belongs-to', collection, ...options })
}

export const FILTER_OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'like'] as const
export type FilterOperator = typeof FILTER_OPERATORS[number]
/**
 * Operators that compare with values the field can hold, its bounds included:
 * a value outside them would match nothing (by `ne`, everything). Order
 * comparisons (`lt` … `gte`) take any value of the field's type.
 */
export const EQUALITY_OPERATORS: ReadonlySet<FilterOperator> = new Set(['eq', 'ne', 'in'])

/** One comparison on one field; a named filter is a list of them, ANDed. */
export interface Condition {
  readonly field: string
  readonly op: FilterOperator
  readonly value: unknown
}

/** Values a named filter may depend on, computed once per request. */
export interface FilterContext {
  readonly now: Date
  /** Today's date in UTC as `YYYY-MM-DD`, comparable with `format: date` fields. */
  readonly today: string
}

export type NamedFilter = readonly Condition[] | ((context: FilterContext) => readonly Condition[])

export function where (field: string, op: FilterOperator, value: unknown): Condition {
  return Object.freeze({ field, op, value })
}

export interface Deprecation {
  /** RFC 3339 date-time or date from which the resource is deprecated (`Deprecation`). */
  readonly since?: string
  /** RFC 3339 date-time or date after which the resource may disappear (`Sunset`). */
  readonly sunset?: string
  /** A page explaining the deprecation (`Link: <…>; rel="deprecation"`). */
  readonly link?: string
}

/** Every resource has a `name`; the definition chooses its bounds. */
type NamedProperties = TProperties & { name: TSchema }

export interface ResourceOptions<P extends NamedProperties = NamedProperties> {
  /** Plural, URL-safe collection name: `/v1/{collection}`. */
  readonly collection: string
  /** Singular noun for operation ids and schema names (default: collection minus a trailing `s`). */
  readonly singular?: string
  readonly description?: string
  /** The writable fields. Defaults, bounds and formats live in the TypeBox schema. */
  readonly fields: TObject<P>
  readonly relations?: Readonly<Record<string, Relation>>
  readonly unique?: ReadonlyArray<keyof P & string>
  readonly filters?: Readonly<Record<string, NamedFilter>>
  readonly filterable?: ReadonlyArray<keyof P & string>
  readonly sortable?: ReadonlyArray<keyof P & string>
  /** A read-only field stamped with the caller's subject; callers then see only their own records. */
  readonly owner?: string
  /** Seconds a client may reuse a read without revalidating (default: revalidate every time). */
  readonly cache?: { readonly maxAge: number }
  readonly deprecated?: boolean | Deprecation
  /** Refuse PUT / PATCH / DELETE without If-Match (428), so no client can overwrite unseen changes. */
  readonly requireIfMatch?: boolean
  /** A valid create body, used as the example in the OpenAPI document. */
  readonly example?: Partial<Static<TObject<P>>>
}

export interface ResourceDefinition extends ResourceOptions {
  readonly singular: string
  readonly relations: Readonly<Record<string, Relation>>
  readonly unique: readonly string[]
  readonly filters: Readonly<Record<string, NamedFilter>>
  readonly filterable: readonly string[]
  readonly sortable: readonly string[]
}

const IDENTIFIER = /^[a-z][a-zA-Z0-9]*$/
const COLLECTION = /^[a-z][a-z0-9-]*$/
const SINGULAR = /^[a-z][a-zA-Z0-9-]*$/
/** Collections and fields name tables and columns: PostgreSQL keeps no more of a name than this (and cuts it silently). */
export const MAX_NAME_LENGTH = 63

function checkLength (collection: string, what: string, name: string): void {
  if (name.length > MAX_NAME_LENGTH) fail(collection, `${what} "${name}" is ${name.length} characters long; a database name holds at most ${MAX_NAME_LENGTH}`)
}

function checkNotObjectMember (collection: string, what: string, name: string): void {
  if (isObjectMemberName(name)) fail(collection, `${what} "${name}" is a name every JavaScript object already has (Object.prototype.${name}), which would read as present where it is left out: name it otherwise`)
}
/** Names the engine itself puts on every representation. */
export const RESERVED_FIELDS = ['id', 'links', 'createdAt', 'updatedAt', 'version'] as const
/** Collections the engine serves itself under /v1 (admin-routes.ts, webhooks/routes.ts, token-route.ts). */
export const ENGINE_COLLECTIONS = ['api-keys', 'clients', 'webhooks', 'auth'] as const

/** The query parameters of every list: a filterable field of one of these names would take its parameter (query-schema.ts). */
export const LIST_PARAMETERS = ['page', 'limit', 'sort', 'filter', 'fields', 'cursor'] as const

export class DefinitionError extends Error {
  override name = 'DefinitionError'
}

function fail (collection: string, message: string): never {
  throw new DefinitionError(`resource "${collection}": ${message}`)
}

function checkFieldList (collection: string, what: string, names: readonly string[], fields: TProperties): void {
  for (const name of names) {
    if (!(name in fields)) fail(collection, `${what} names "${name}", which is not a field`)
  }
}

/**
 * Column names that differ only in case are one column to SQLite, whose start
 * then failed with `duplicate column name`; refused on every database, so a
 * definition that runs on PostgreSQL runs on SQLite too.
 */
function checkColumnNames (collection: string, names: readonly string[]): void {
  const seen = new Map<string, string>()
  for (const name of names) {
    const earlier = seen.get(name.toLowerCase())
    if (earlier !== undefined && earlier !== name) fail(collection, `field "${name}" differs from "${earlier}" only in case, and SQLite does not tell column names apart by case: name it otherwise`)
    seen.set(name.toLowerCase(), earlier ?? name)
  }
}

/**
 * Validates a resource definition as far as it can be checked alone (names,
 * field lists) and returns it frozen with every optional list filled in.
 * Checks that need the other definitions (relation targets) happen when the
 * model is built.
 */
export function defineResource<P extends NamedProperties> (options: ResourceOptions<P>): ResourceDefinition {
  const { collection } = options
  if (!COLLECTION.test(collection)) fail(collection, 'collection must be lower-case letters, digits and dashes, starting with a letter')
  checkLength(collection, 'collection', collection)
  if ((ENGINE_COLLECTIONS as readonly string[]).includes(collection)) fail(collection, `/v1/${collection} is the engine's own; name the collection otherwise`)
  // The singular names the resource's schemas and operations (TaskCreate, createTask), which must be identifiers.
  const singular = options.singular ?? collection.replace(/s$/, '')
  if (!SINGULAR.test(singular)) fail(collection, `singular "${singular}" must be letters, digits and dashes, starting with a lower-case letter${options.singular === undefined ? ' (it is the collection without its last "s"): set singular' : ''}`)
  const properties = options.fields.properties
  if (options.fields.type !== 'object' || properties === undefined) fail(collection, 'fields must be a Type.Object')
  if (properties.name === undefined || properties.name.type !== 'string') fail(collection, 'fields must declare "name" as a string')
  // Every representation has a name (the contract): one that may be left out needs a default to fill it.
  if (!((options.fields.required ?? []) as readonly string[]).includes('name') && properties.name!.default === undefined) fail(collection, 'field "name" must be required, or have a default: every resource has a name')
  for (const field of Object.keys(properties)) {
    if (!IDENTIFIER.test(field)) fail(collection, `field "${field}" must be camelCase letters and digits`)
    checkLength(collection, 'field', field)
    checkNotObjectMember(collection, 'field', field)
    if ((RESERVED_FIELDS as readonly string[]).includes(field)) fail(collection, `field "${field}" is reserved by the engine`)
    const fault = fieldSchemaFault(field, properties[field]!)
    if (fault !== undefined) fail(collection, fault)
  }
  const unique = [...(options.unique ?? [])]
  const filterable = [...(options.filterable ?? [])]
  const sortable = [...(options.sortable ?? [])]
  checkFieldList(collection, 'unique', unique, properties)
  checkFieldList(collection, 'filterable', filterable, properties)
  checkFieldList(collection, 'sortable', sortable, properties)
  for (const name of filterable) {
    if ((LIST_PARAMETERS as readonly string[]).includes(name)) fail(collection, `filterable field "${name}" would take the list's own "${name}" parameter (${name}=…): rename the field, or leave it unfilterable`)
  }
  const relations = { ...(options.relations ?? {}) }
  for (const [name, relation] of Object.entries(relations)) {
    if (!IDENTIFIER.test(name) || name === 'self') fail(collection, `relation name "${name}" must be camelCase and not "self"`)
    checkNotObjectMember(collection, 'relation name', name)
    if (relation.kind === 'belongs-to' && !(relation.foreignKey in properties)) {
      fail(collection, `relation "${name}" uses foreign key "${relation.foreignKey}", which is not a field`)
    }
  }
  const [writeOnlyFault] = writeOnlyFaults(properties, { unique, filterable, sortable }, relations)
  if (writeOnlyFault !== undefined) fail(collection, writeOnlyFault)
  if (options.owner !== undefined) {
    if (!IDENTIFIER.test(options.owner)) fail(collection, `owner field "${options.owner}" must be camelCase`)
    checkLength(collection, 'owner field', options.owner)
    checkNotObjectMember(collection, 'owner field', options.owner)
    if (options.owner in properties) fail(collection, `owner field "${options.owner}" is read-only and must not be among the writable fields`)
  }
  checkColumnNames(collection, [...RESERVED_FIELDS, ...(options.owner === undefined ? [] : [options.owner]), ...Object.keys(properties)])
  const deprecationFaulty = typeof options.deprecated === 'object' ? deprecationFault(options.deprecated) : undefined
  if (deprecationFaulty !== undefined) fail(collection, deprecationFaulty)
  if (options.cache !== undefined && !(Number.isInteger(options.cache.maxAge) && options.cache.maxAge >= 0)) {
    fail(collection, 'cache.maxAge must be a whole number of seconds')
  }
  const filters = { ...(options.filters ?? {}) }
  for (const name of Object.keys(filters)) {
    if (!IDENTIFIER.test(name)) fail(collection, `filter name "${name}" must be camelCase`)
    checkNotObjectMember(collection, 'filter name', name)
  }
  return Object.freeze({
    ...options,
    singular,
    relations: Object.freeze(relations),
    unique: Object.freeze(unique),
    filters: Object.freeze(filters),
    filterable: Object.freeze(filterable),
    sortable: Object.freeze(sortable)
  }) as ResourceDefinition
}
