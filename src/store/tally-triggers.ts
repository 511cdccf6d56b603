/**
 * The triggers that keep a tally (row-counts.ts, value-counts.ts), by name,
 * so that a start can tell a tally whose triggers are gone from one in place.
 * A tally without its triggers drifts from the rows silently: a restore that
 * left them out, a trigger dropped by hand, or a PostgreSQL database from
 * before derived names were fitted to 63 bytes (identifiers.ts), whose
 * triggers carry the names PostgreSQL cut.
 */
import { storedName } from './identifiers.js'
import type { IndexTraits } from './tables.js'

/** The names the dialects give a tally's triggers: a collection's row count, or one column's counts per value. */
export function tallyTriggers (table: string, column?: string): string[] {
  const prefix = column === undefined ? `${table}_count` : `${table}_${column}_count`
  return [`${prefix}_inserts`, `${prefix}_deletes`, ...(column === undefined ? [] : [`${prefix}_updates`])]
}

/** Whether every trigger of that tally exists among `existing` (the names the database has). */
export function tallyKept (existing: ReadonlySet<string>, traits: IndexTraits, table: string, column?: string): boolean {
  return tallyTriggers(table, column).every(name => existing.has(storedName(traits, name)))
}
