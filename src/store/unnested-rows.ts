/**
 * Many rows sent as one array parameter per column and unnested
 * (PostgreSQL's `unnest($1::bigint[], $2::text[], …)`): what the statements
 * that gather a turn's writes are made of (gathered-writes.ts,
 * idempotency-batches.ts). One statement text, prepared once, however many
 * rows.
 */
import { sql, type RawBuilder } from 'kysely'
import type { Dialect } from './dialect.js'
import type { ColumnKind } from './tables.js'

/** How the dialect binds one column's values for many rows (`$1::bigint[]`). */
type ArrayOf = NonNullable<Dialect['manyRows']>['array']

export interface UnnestedRows {
  /** A column of the unnested rows. */
  of (name: string): RawBuilder<unknown>
  /**
   * `unnest` of one array parameter per column (in `slots`, of these kinds),
   * as the rows with these column names; with `ordinality`, the last name is
   * a column that numbers them.
   */
  from (kinds: readonly ColumnKind[], slots: readonly unknown[], names: readonly string[], ordinality?: boolean): RawBuilder<unknown>
}

/** The unnested rows, called `alias` in the statement: a name no column has. */
export function unnestedRows (array: ArrayOf, alias: string): UnnestedRows {
  return {
    of: name => sql.ref(`${alias}.${name}`),
    from: (kinds, slots, names, ordinality = false) =>
      sql`unnest(${sql.join(kinds.map((kind, i) => array(kind, slots[i])))}) ${sql.raw(ordinality ? 'with ordinality' : '')} as ${sql.id(alias)}(${sql.join(names.map(name => sql.id(name)))})`
  }
}

/** The values of each of `count` columns for all of `rows`: an unnest's parameters. */
export function columnsOf (rows: ReadonlyArray<readonly unknown[]>, count: number): unknown[][] {
  return Array.from({ length: count }, (_, i) => rows.map(values => values[i]))
}
