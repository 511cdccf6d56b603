/**
 * Resolves the definitions against each other (relation targets, foreign-key
 * types, delete rules) into the runtime model every other part of the engine
 * reads. Checks that need more than one definition live here.
 */
import { Type, type SchemaOptions, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { canonicalDateTime } from '../http/date-time.js'
import { DefinitionError, FILTER_OPERATORS, type OnDelete, type ResourceDefinition } from './define.js'
import { conditionFault } from './filter-value-checks.js'
import { normalizeSchema } from './normalize-schema.js'

/** How a field is held in storage, independent of the dialect. */
export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'json'

export interface Field {
  readonly name: string
  readonly schema: TSchema
  readonly kind: FieldKind
  readonly required: boolean
  /** The declared default, when there is one (a fresh copy is used on every write). */
  readonly default?: unknown
  readonly hasDefault: boolean
  readonly writeOnly: boolean
  readonly unique: boolean
}

export interface ParentLink {
  /** Relation name on the child, e.g. `project`. */
  readonly name: string
  readonly parent: string
  readonly foreignKey: string
  readonly onDelete: OnDelete
}

export interface ChildLink {
  /** Relation name on the parent, e.g. `tasks`. */
  readonly name: string
  readonly child: string
  readonly foreignKey: string
  readonly onDelete: OnDelete
}

/** A relation by which records of `child` refer to a resource's records, declared from either side. */
export interface Referrer {
  readonly child: string
  readonly foreignKey: string
  readonly onDelete: OnDelete
}

export interface Resource {
  readonly definition: ResourceDefinition
  readonly collection: string
  readonly singular: string
  /** PascalCase singular: the stem of component names (`Project`, `ProjectCreate`). */
  readonly typeName: string
  /** PascalCase plural, for operation ids such as `listProjects`. */
  readonly pluralTypeName: string
  readonly fields: ReadonlyMap<string, Field>
  readonly owner?: string
  readonly parents: readonly ParentLink[]
  /** The has-many relations it declares: its related collections' paths and links. */
  readonly children: readonly ChildLink[]
  /**
   * Every relation by which records refer to its records, whether or not it
   * declares the has-many side: what deleting one cascades to, or is refused by.
   */
  readonly referrers: readonly Referrer[]
}

export interface Model {
  readonly resources: readonly Resource[]
  get (collection: string): Resource
}

export const pascal = (word: string): string =>
  word.split(/[-_]/).map(part => part.charAt(0).toUpperCase() + part.slice(1)).join('')

/**
 * A field's value as stored and compared: a date-time field's in its one
 * spelling (date-time.ts), so that filters and sorts compare instants; any
 * other as sent. A filter's `in` list is converted item by item.
 */
export function storedForm (field: Field, value: unknown): unknown {
  if ((field.schema as { format?: unknown }).format !== 'date-time') return value
  if (Array.isArray(value)) return value.map(item => storedForm(field, item))
  // One it cannot hold is left as sent, for the schema to name.
  return typeof value === 'string' ? canonicalDateTime(value) ?? value : value
}

export function fieldKind (schema: TSchema): FieldKind {
  if (schema.type === 'string') return 'string'
  if (schema.type === 'integer') return 'integer'
  if (schema.type === 'number') return 'number'
  if (schema.type === 'boolean') return 'boolean'
  if (Array.isArray(schema.enum) && schema.enum.every((value: unknown) => typeof value === 'string')) return 'string'
  return 'json'
}

/**
 * A closed set of strings as one `enum`, the form `normalizeSchema` gives
 * fields, for the engine's own schemas. In a response schema, TypeBox's union
 * of literals (`anyOf`) also makes fast-json-stringify give that response's
 * serializer an Ajv instance of its own, to tell the branches apart.
 */
export function stringEnum<T extends string> (values: readonly T[], options: SchemaOptions = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ ...options, type: 'string', enum: [...values] })
}

function buildFields (definition: ResourceDefinition): Map<string, Field> {
  const required = new Set(definition.fields.required ?? [])
  const fields = new Map<string, Field>()
  for (const [name, declared] of Object.entries(definition.fields.properties)) {
    const schema = normalizeSchema(declared)
    const hasDefault = 'default' in schema
    fields.set(name, Object.freeze({
      name,
      schema,
      kind: fieldKind(schema),
      required: required.has(name),
      default: schema.default as unknown,
      hasDefault,
      writeOnly: schema.writeOnly === true,
      unique: definition.unique.includes(name)
    }))
  }
  return fields
}

function resolveRelations (definitions: readonly ResourceDefinition[]): Map<string, { parents: ParentLink[], children: ChildLink[] }> {
  const byCollection = new Map(definitions.map(d => [d.collection, d]))
  const links = new Map(definitions.map(d => [d.collection, { parents: [] as ParentLink[], children: [] as ChildLink[] }]))
  const fail = (collection: string, message: string): never => { throw new DefinitionError(`resource "${collection}": ${message}`) }

  for (const definition of definitions) {
    for (const [name, relation] of Object.entries(definition.relations)) {
      const target = byCollection.get(relation.collection)
      if (target === undefined) fail(definition.collection, `relation "${name}" points to unknown collection "${relation.collection}"`)
      if (relation.kind === 'belongs-to') {
        const key = definition.fields.properties[relation.foreignKey]
        if (key?.type !== 'integer') fail(definition.collection, `foreign key "${relation.foreignKey}" must be an integer field`)
        // The parent's has-many side may also state the delete rule; both must agree.
        const inverse = Object.values(target!.relations).find(r => r.kind === 'has-many' && r.collection === definition.collection && r.foreignKey === relation.foreignKey)
        const onDelete = relation.onDelete ?? inverse?.onDelete ?? 'restrict'
        if (inverse?.onDelete !== undefined && relation.onDelete !== undefined && inverse.onDelete !== relation.onDelete) {
          fail(definition.collection, `relation "${name}" says onDelete "${relation.onDelete}" but ${target!.collection} says "${inverse.onDelete}"`)
        }
        links.get(definition.collection)!.parents.push({ name, parent: target!.collection, foreignKey: relation.foreignKey, onDelete })
      } else {
        const key = target!.fields.properties[relation.foreignKey]
        if (key?.type !== 'integer') fail(definition.collection, `relation "${name}" needs integer field "${relation.foreignKey}" on ${target!.collection}`)
        const inverse = Object.values(target!.relations).find(r => r.kind === 'belongs-to' && r.collection === definition.collection && r.foreignKey === relation.foreignKey)
        if (inverse === undefined) {
          fail(definition.collection, `relation "${name}" needs ${target!.collection} to declare belongsTo('${definition.collection}', { foreignKey: '${relation.foreignKey}' })`)
        }
        links.get(definition.collection)!.children.push({ name, child: target!.collection, foreignKey: relation.foreignKey, onDelete: relation.onDelete ?? inverse!.onDelete ?? 'restrict' })
      }
    }
  }
  return links
}

/**
 * Filterable and sortable fields must be scalar (an object or array field is
 * stored as JSON text, whose order and comparisons mean nothing to a client),
 * and named filters may only compare fields the resource has.
 */
function checkFilters (definition: ResourceDefinition, fields: ReadonlyMap<string, Field>): void {
  const fail = (message: string): never => { throw new DefinitionError(`resource "${definition.collection}": ${message}`) }
  for (const [list, names] of [['filterable', definition.filterable], ['sortable', definition.sortable]] as const) {
    for (const name of names) if (fields.get(name)?.kind === 'json') fail(`${list} field "${name}" must be a string, number, integer, boolean, or a union of string or number literals: any other value (an object, an array, a union of mixed types) is stored as JSON text, whose comparisons and order mean nothing to a client`)
  }
  const columns = new Set([...fields.keys(), 'id', 'createdAt', 'updatedAt', ...(definition.owner === undefined ? [] : [definition.owner])])
  const sample = { now: new Date(0), today: '1970-01-01' }
  for (const [name, filter] of Object.entries(definition.filters)) {
    for (const condition of typeof filter === 'function' ? filter(sample) : filter) {
      if (!columns.has(condition.field)) fail(`filter "${name}" compares "${condition.field}", which is not a field`)
      if (!FILTER_OPERATORS.includes(condition.op)) fail(`filter "${name}" uses unknown operator "${String(condition.op)}"`)
      const fault = conditionFault(fields, condition)
      if (fault !== undefined) fail(`filter "${name}" ${fault}`)
    }
  }
}

export function buildModel (definitions: readonly ResourceDefinition[]): Model {
  const seen = new Set<string>()
  for (const definition of definitions) {
    if (seen.has(definition.collection)) throw new DefinitionError(`resource "${definition.collection}" is defined twice`)
    seen.add(definition.collection)
  }
  const relations = resolveRelations(definitions)
  const resources = definitions.map((definition): Resource => {
    const { parents, children } = relations.get(definition.collection)!
    const fields = buildFields(definition)
    checkFilters(definition, fields)
    return Object.freeze({
      definition,
      collection: definition.collection,
      singular: definition.singular,
      typeName: pascal(definition.singular),
      pluralTypeName: pascal(definition.collection),
      fields,
      owner: definition.owner,
      parents: Object.freeze(parents),
      children: Object.freeze(children),
      referrers: Object.freeze(definitions.flatMap(other => relations.get(other.collection)!.parents
        .filter(link => link.parent === definition.collection)
        .map(link => ({ child: other.collection, foreignKey: link.foreignKey, onDelete: link.onDelete }))))
    })
  })
  const byCollection = new Map(resources.map(r => [r.collection, r]))
  return Object.freeze({
    resources: Object.freeze(resources),
    get (collection: string): Resource {
      const resource = byCollection.get(collection)
      if (resource === undefined) throw new Error(`unknown collection ${collection}`)
      return resource
    }
  })
}
