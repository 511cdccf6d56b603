/**
 * A resource's rows as its tables hold them: the kind of each column, which
 * ones can be empty, and the conversions between a row and a stored record.
 */
import type { Resource } from '../resources/model.js'
import type { Dialect } from './dialect.js'
import type { StoredRecord } from './store.js'
import type { ColumnKind, TableSpec } from './tables.js'

export type Row = Record<string, unknown>

export interface RowCodec {
  /** The kind of a column; a name the definitions do not have is a bug and throws, never reaches SQL. */
  kind (resource: Resource, column: string): ColumnKind
  nullable (resource: Resource, column: string): boolean
  /**
   * Every column of the resource's table, by name: what its reads select and
   * its writes return. Never `*`: that would take in a column another process
   * adds (a newer version's additive migration, in a rolling deploy), and a
   * PostgreSQL statement prepared before it then fails ("cached plan must not
   * change result type").
   */
  columns (resource: Resource): readonly string[]
  decode (resource: Resource, row: Row): StoredRecord
  /** The definition's fields (and owner) of a write, as the driver stores them. */
  encodeFields (resource: Resource, values: Readonly<Record<string, unknown>>): Row
  /** One value compared with a column, as the driver stores it. */
  encode (resource: Resource, column: string, value: unknown): unknown
}

export function rowCodec (dialect: Dialect, specs: ReadonlyMap<string, TableSpec>): RowCodec {
  const kinds = new Map([...specs].map(([table, spec]) => [table, new Map(spec.columns.map(column => [column.name, column.kind]))]))
  const nullable = new Map([...specs].map(([table, spec]) => [table, new Set(spec.columns.filter(column => !column.notNull).map(column => column.name))]))
  const columns = new Map([...specs].map(([table, spec]) => [table, spec.columns.map(column => column.name)]))

  function kind (resource: Resource, column: string): ColumnKind {
    const found = kinds.get(resource.collection)?.get(column)
    if (found === undefined) throw new Error(`${resource.collection} has no column ${column}`)
    return found
  }

  /** Each resource's fields and their kinds, found once: a record read decodes every field, two lookups each. */
  const decoding = new WeakMap<Resource, ReadonlyArray<readonly [string, ColumnKind]>>()
  function fieldKinds (resource: Resource): ReadonlyArray<readonly [string, ColumnKind]> {
    let found = decoding.get(resource)
    if (found === undefined) {
      found = [...resource.fields.keys()].map(field => [field, kind(resource, field)] as const)
      decoding.set(resource, found)
    }
    return found
  }

  return {
    kind,
    nullable: (resource, column) => nullable.get(resource.collection)?.has(column) === true,
    columns: resource => columns.get(resource.collection)!,
    encode: (resource, column, value) => dialect.encode(kind(resource, column), value),

    decode (resource, row) {
      const values: Record<string, unknown> = {}
      for (const [field, fieldKind] of fieldKinds(resource)) {
        const value = dialect.decode(fieldKind, row[field])
        if (value !== undefined) values[field] = value
      }
      if (resource.owner !== undefined && row[resource.owner] !== null && row[resource.owner] !== undefined) {
        values[resource.owner] = row[resource.owner]
      }
      return {
        id: Number(row.id),
        version: Number(row.version),
        createdAt: dialect.decode('timestamp', row.createdAt) as string,
        updatedAt: dialect.decode('timestamp', row.updatedAt) as string,
        values
      }
    },

    encodeFields (resource, values) {
      const row: Row = {}
      for (const field of resource.fields.keys()) row[field] = dialect.encode(kind(resource, field), values[field])
      if (resource.owner !== undefined && values[resource.owner] !== undefined) row[resource.owner] = values[resource.owner]
      return row
    }
  }
}
