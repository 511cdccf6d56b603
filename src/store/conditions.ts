/**
 * Where clauses from the engine's conditions: comparisons, `in` lists, `like`
 * patterns, and the keyset condition of a cursor page. Column names come from
 * the definitions; every value is a bound parameter.
 */
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import type { Condition } from '../resources/define.js'
import type { Resource } from '../resources/model.js'
import type { Database, Dialect } from './dialect.js'
import type { RowCodec } from './row-codec.js'
import type { SortKey } from './store.js'

export type Builder = ExpressionBuilder<Database, string>
export type Where = (eb: Builder) => Expression<SqlBool>

// `ne` keeps rows without a value: "assignee is not bob" includes tasks nobody is assigned to.
export const COMPARISONS = { eq: '=', ne: 'is distinct from', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const

/** `*` is the only wildcard; `%`, `_` and the escape character itself match literally. */
export function likePattern (value: string): string {
  return value.replace(/[\\%_]/g, match => `\\${match}`).replace(/\*/g, '%')
}

/** Fields whose conditions must not be served by an index (`Dialect.unindexed`). */
export type Unindexed = ReadonlySet<string>

export interface ConditionSql {
  /** All the conditions, ANDed. */
  matching (resource: Resource, conditions: readonly Condition[], unindexed?: Unindexed): Where
  /** A field as a condition tests it: its column, or where the dialect can say so and `unindexed` has it, the column as an expression no index serves. */
  tested (eb: Builder, field: string, unindexed?: Unindexed): Expression<unknown>
  /**
   * Rows strictly after a keyset position, under an order where missing values
   * sort last in either direction, as branches whose union they are, in the
   * order their rows come: … (k1 = v1 AND k2 beyond v2), (k1 = v1 AND k2 IS
   * NULL), (k1 beyond v1), (k1 IS NULL), a key's IS NULL branch only where it
   * can be missing. Each branch is one range of an index on the keys, so each
   * can be entered at its start and read in order. The values are already
   * encoded (or stand-ins for them); which are missing decides the branches.
   */
  keyset (resource: Resource, orderBy: readonly SortKey[], values: readonly unknown[]): Where[]
}

export function conditionSql (dialect: Dialect, rows: RowCodec): ConditionSql {
  const tested = (eb: Builder, field: string, unindexed?: Unindexed): Expression<unknown> =>
    unindexed?.has(field) === true && dialect.unindexed !== undefined ? dialect.unindexed(field) : eb.ref(field)

  function condition (resource: Resource, eb: Builder, { field, op, value }: Condition, unindexed?: Unindexed): Expression<SqlBool> {
    const column = tested(eb, field, unindexed)
    if (op === 'in') return eb(column, 'in', (value as unknown[]).map(item => rows.encode(resource, field, item)))
    if (op === 'like') return dialect.like(column, likePattern(String(value)))
    return eb(column, COMPARISONS[op], rows.encode(resource, field, value))
  }

  return {
    matching: (resource, conditions, unindexed) => eb => eb.and(conditions.map(item => condition(resource, eb, item, unindexed))),
    tested,

    keyset: (resource, orderBy, values) => {
      const branches: Where[] = []
      // From the last key to the first: the rows that tie on more keys come first.
      for (let i = orderBy.length - 1; i >= 0; i--) {
        const { field, direction } = orderBy[i]!
        const value = values[i]
        // Nothing sorts after a missing value but other missing values, which the next key orders.
        if (value === null || value === undefined) continue
        const equalBefore = (eb: Builder): Array<Expression<SqlBool>> => orderBy.slice(0, i).map(({ field: previous }, j) => {
          const earlier = values[j]
          return earlier === null || earlier === undefined ? eb(eb.ref(previous), 'is', null) : eb(eb.ref(previous), '=', earlier)
        })
        branches.push(eb => eb.and([...equalBefore(eb), eb(eb.ref(field), direction === 'asc' ? '>' : '<', value)]))
        if (rows.nullable(resource, field)) branches.push(eb => eb.and([...equalBefore(eb), eb(eb.ref(field), 'is', null)]))
      }
      return branches
    }
  }
}
