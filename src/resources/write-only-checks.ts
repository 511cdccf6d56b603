/**
 * What a definition may not do with a write-only field (`writeOnly: true`,
 * a secret): the representation leaves it out, so nothing else may show it,
 * or let a caller test a guess of it. Refused when the definition loads
 * (define.ts).
 */
import type { TProperties } from '@sinclair/typebox'
import type { Relation } from './define.js'
import { findInside } from './schema-walk.js'

/** Why each field list would give a write-only value away. */
const REVEALS = {
  unique: 'a 409 would tell a caller that some record holds the value they sent',
  filterable: 'the records a filter matches would tell its value',
  sortable: 'the order of a sorted list would tell its value'
} as const

export type FieldLists = Readonly<Record<keyof typeof REVEALS, readonly string[]>>

/** Every way the definition would show, or let a caller probe, a write-only value. */
export function writeOnlyFaults (properties: TProperties, lists: FieldLists, relations: Readonly<Record<string, Relation>>): string[] {
  const faults: string[] = []
  for (const [field, schema] of Object.entries(properties)) {
    if (findInside(schema, inner => inner.writeOnly === true) !== undefined) faults.push(`field "${field}" marks a value inside it write-only, but only a whole field is left out of representations: make the secret a field of its own`)
    if (schema.writeOnly !== true) continue
    if (field === 'name') faults.push('field "name" cannot be write-only: it names the record in every representation')
    for (const list of Object.keys(REVEALS) as Array<keyof typeof REVEALS>) {
      if (lists[list].includes(field)) faults.push(`write-only field "${field}" cannot be ${list}: ${REVEALS[list]}`)
    }
    for (const [name, relation] of Object.entries(relations)) {
      if (relation.kind === 'belongs-to' && relation.foreignKey === field) faults.push(`write-only field "${field}" cannot be the foreign key of relation "${name}": its link shows the value`)
    }
  }
  return faults
}
