/**
 * Names the engine derives from a definition (indexes, triggers, trigger
 * functions) must stay whole in the database. PostgreSQL keeps the first 63
 * bytes of an identifier and drops the rest with only a notice, so two long
 * derived names that agree on their first 63 bytes became one: the second
 * tally function replaced the first, and an index was never made.
 */
import { hash } from 'node:crypto'

/** PostgreSQL's NAMEDATALEN - 1. */
export const POSTGRES_MAX_NAME_BYTES = 63

/** Hex digits of the whole name's digest that end a shortened one. */
const DIGEST_LENGTH = 8

/**
 * `name` if it fits in `maxBytes`, else its start followed by a digest of the
 * whole: the same name always gives the same result, and two names that
 * differ anywhere give different ones. Derived names are ASCII (collection
 * and field names are checked to be), so a character is a byte.
 */
export function fitName (name: string, maxBytes: number): string {
  if (Buffer.byteLength(name) <= maxBytes) return name
  return `${name.slice(0, maxBytes - DIGEST_LENGTH - 1)}_${hash('sha256', name).slice(0, DIGEST_LENGTH)}`
}

/** A derived name as the database stores it: fitted where names are limited (PostgreSQL), whole elsewhere. */
export function storedName (limits: { readonly maxNameBytes?: number }, name: string): string {
  return limits.maxNameBytes === undefined ? name : fitName(name, limits.maxNameBytes)
}
