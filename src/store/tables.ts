/**
 * Definition → tables: columns, indexes, unique constraints and foreign keys,
 * and the additive migration plan that brings an existing database in line.
 * Dialect-neutral: the dialect only maps column kinds to its own types.
 */
import type { FieldKind, Model, Resource } from '../resources/model.js'
import type { OnDelete } from '../resources/define.js'
import { sortKeys } from '../resources/query-schema.js'
import { storedName } from './identifiers.js'

export type ColumnKind = FieldKind | 'id' | 'timestamp'

export interface ColumnSpec {
  readonly name: string
  readonly kind: ColumnKind
  readonly notNull: boolean
  /** A database default, so that a column added to a populated table is filled. */
  readonly default?: unknown
  readonly references?: { readonly table: string, readonly onDelete: OnDelete }
}

export interface IndexSpec {
  readonly name: string
  readonly columns: readonly string[]
  readonly unique: boolean
  /**
   * Every column DESC, the first one NULLS LAST: the order of a descending
   * sort by a column that can be missing, ties broken by the (never missing) id.
   */
  readonly descending?: boolean
}

/** What a database's indexes can and cannot serve, as far as deriving them goes. */
export interface IndexTraits {
  /**
   * Whether `ORDER BY x DESC NULLS LAST` needs an index of its own: PostgreSQL
   * reads an ascending index backwards only as DESC NULLS FIRST; SQLite's
   * planner reads the non-null range and then the nulls from the ascending one.
   */
  readonly descendingNullsLastNeedsIndex: boolean
  /** The longest index name the database keeps whole, in bytes (PostgreSQL cuts longer ones); none where there is no limit. */
  readonly maxNameBytes?: number
}

export interface TableSpec {
  readonly name: string
  readonly columns: readonly ColumnSpec[]
  readonly indexes: readonly IndexSpec[]
  /** Columns whose values form a small closed set (booleans, enums): counted per value where the dialect can (value-counts.ts). */
  readonly tallied: readonly string[]
}

export const MIGRATIONS_TABLE = 'resourcery_migrations'
export const SECRETS_TABLE = 'resourcery_secrets'

function fieldColumns (model: Model, resource: Resource): ColumnSpec[] {
  const columns: ColumnSpec[] = []
  for (const field of resource.fields.values()) {
    const parent = resource.parents.find(link => link.foreignKey === field.name)
    columns.push({
      name: field.name,
      kind: field.kind,
      // Defaulted fields always hold a value (the engine fills it in), so they are NOT NULL too.
      notNull: field.required || field.hasDefault,
      ...(field.hasDefault ? { default: field.default } : {}),
      ...(parent === undefined ? {} : { references: { table: model.get(parent.parent).collection, onDelete: parent.onDelete } })
    })
  }
  return columns
}

/**
 * The name the engine gives an index, as the database stores it: migration
 * also uses it to tell the engine's own unique indexes from an operator's.
 */
export function indexName (table: string, columns: readonly string[], unique: boolean, traits: IndexTraits, descending = false): string {
  return storedName(traits, `${table}_${columns.join('_')}_${descending ? 'desc_' : ''}${unique ? 'key' : 'idx'}`)
}

function indexes (resource: Resource, nullable: ReadonlySet<string>, traits: IndexTraits): IndexSpec[] {
  const table = resource.collection
  const result: IndexSpec[] = []
  const seen = new Set<string>()
  const add = (columns: readonly string[], unique: boolean, descending = false): void => {
    const name = indexName(table, columns, unique, traits, descending)
    if (seen.has(name)) return
    seen.add(name)
    result.push({ name, columns, unique, ...(descending ? { descending } : {}) })
  }
  const definition = resource.definition
  // An owned record is unique among its owner's: a clash with a record the caller cannot see would tell them it exists.
  for (const column of definition.unique) add(resource.owner === undefined ? [column] : [resource.owner, column], true)
  // A sort is by the key and then by id: an index in that order serves the ORDER BY … LIMIT of a page
  // on PostgreSQL too (SQLite's indexes end in the rowid anyway), and filters on the key as well.
  // Every key a client may sort by has one (name and the timestamps included): without it a page
  // sorts the whole table, which on SQLite holds up every other request while it runs.
  const sorted = new Set(sortKeys(resource).filter(column => column !== 'id'))
  for (const column of sorted) {
    add([column, 'id'], false)
    if (nullable.has(column) && traits.descendingNullsLastNeedsIndex) add([column, 'id'], false, true)
  }
  for (const link of resource.parents) if (!sorted.has(link.foreignKey)) add([link.foreignKey], false)
  if (resource.owner !== undefined && !sorted.has(resource.owner)) add([resource.owner], false)
  for (const column of definition.filterable) if (!sorted.has(column)) add([column], false)
  return result
}

export function tableSpec (model: Model, resource: Resource, traits: IndexTraits): TableSpec {
  const columns: ColumnSpec[] = [
    { name: 'id', kind: 'id', notNull: true },
    { name: 'version', kind: 'integer', notNull: true, default: 1 },
    { name: 'createdAt', kind: 'timestamp', notNull: true },
    { name: 'updatedAt', kind: 'timestamp', notNull: true },
    ...(resource.owner === undefined ? [] : [{ name: resource.owner, kind: 'string' as const, notNull: false }]),
    ...fieldColumns(model, resource)
  ]
  const nullable = new Set(columns.filter(column => !column.notNull).map(column => column.name))
  const tallied = [...resource.fields.values()].filter(field => field.kind === 'boolean' || Array.isArray(field.schema.enum)).map(field => field.name)
  return { name: resource.collection, columns, indexes: indexes(resource, nullable, traits), tallied }
}

/** What the database has now, as far as the plan needs to know. */
export interface ExistingColumn {
  readonly name: string
  readonly dataType: string
  readonly notNull: boolean
}

export interface ExistingIndex {
  readonly name: string
  readonly table: string
  /** In index order. */
  readonly columns: readonly string[]
}

export interface MigrationPlan {
  readonly createTables: readonly TableSpec[]
  readonly addColumns: ReadonlyArray<{ readonly table: string, readonly column: ColumnSpec }>
  /** Every index of every table; created when missing. */
  readonly indexes: ReadonlyArray<{ readonly table: string, readonly index: IndexSpec }>
  /** Destructive or incompatible differences, each saying what to do about it. */
  readonly refusals: readonly string[]
}

/**
 * Compares the wanted tables with the existing ones. Only additive changes are
 * planned; anything that would drop, retype or invent data is refused.
 */
export function planMigration (
  wanted: readonly TableSpec[],
  existing: ReadonlyMap<string, readonly ExistingColumn[]>,
  sameType: (kind: ColumnKind, dataType: string) => boolean
): MigrationPlan {
  const createTables: TableSpec[] = []
  const addColumns: Array<{ table: string, column: ColumnSpec }> = []
  const refusals: string[] = []
  for (const table of wanted) {
    const current = existing.get(table.name)
    if (current === undefined) {
      createTables.push(table)
      continue
    }
    const currentByName = new Map(current.map(column => [column.name, column]))
    for (const column of table.columns) {
      const have = currentByName.get(column.name)
      if (have === undefined) {
        if (column.notNull && column.default === undefined) {
          refusals.push(`${table.name}.${column.name} is new and required but has no default: give it a default or make it optional`)
        } else {
          addColumns.push({ table: table.name, column })
        }
      } else if (!sameType(column.kind, have.dataType)) {
        refusals.push(`${table.name}.${column.name} is ${have.dataType} in the database but the definition needs ${column.kind}: changing a column's type is not automatic; add a new field instead`)
      }
    }
    const wantedNames = new Set(table.columns.map(column => column.name))
    for (const column of current) {
      if (!wantedNames.has(column.name)) {
        refusals.push(`${table.name}.${column.name} exists in the database but not in the definition: restore the field, or drop or rename the column by hand once its data is safe`)
      }
    }
  }
  const indexes = wanted.flatMap(table => table.indexes.map(index => ({ table: table.name, index })))
  return { createTables, addColumns, indexes, refusals }
}
