/**
 * Database errors turned into the service's own: an unreachable database is
 * a 503, a unique clash a 409, a foreign key to a missing record a 400 naming
 * the field, a delete of a record others still reference a 409 naming them.
 * Anything else goes on unchanged, to become a 500 that says nothing of SQL.
 */
import { invalid, StillReferenced, storeUnavailable, UniqueViolation, type ProblemIssue } from '../errors.js'
import type { Model, Resource } from '../resources/model.js'
import type { Dialect } from './dialect.js'
import { countOf, countValue } from './row-counts.js'

export interface StoreErrors {
  /** Every foreign key of a write's values that points at no row (none: all there). */
  missingParents: (resource: Resource, values: Readonly<Record<string, unknown>>) => Promise<ProblemIssue[]>
  /** Throws `error` again, as a 503 when the database is unreachable. */
  rethrow: (error: unknown) => never
  /** Throws what a failed insert or update of `values` means to the client. */
  failedWrite: (resource: Resource, values: Readonly<Record<string, unknown>>, error: unknown) => Promise<never>
  /** Throws what a failed delete of record `id` means to the client. */
  failedRemove: (resource: Resource, id: number, error: unknown) => Promise<never>
}

/** The issue of a foreign key that names no parent (or, to its caller, no parent it may see). */
export function missingParentIssue (foreignKey: string, parent: Resource, id: number): ProblemIssue {
  return { in: 'body', pointer: `/${foreignKey}`, detail: `refers to ${parent.singular} ${String(id)}, which does not exist` }
}

/** 409: a write that would give `field` a value another record of `resource` holds. */
export const uniqueClash = (resource: Resource, field: string): Error => new UniqueViolation(`another ${resource.singular} already has this ${field}`)

/** 409: a delete refused because `holders` ("3 tasks") still refer to the record. */
export const stillReferenced = (resource: Resource, holders: readonly string[]): Error =>
  new StillReferenced(`this ${resource.singular} is still referenced by ${holders.join(' and ') || 'other records'}; delete or move them first`)

export function storeErrors (dialect: Dialect, model: Model): StoreErrors {
  const { db } = dialect

  function rethrow (error: unknown): never {
    if (dialect.classify(error)?.kind === 'unavailable') throw storeUnavailable('the database is unavailable; try again shortly')
    throw error
  }

  /**
   * Every foreign key of `values` that points at a row that does not exist.
   * Only ids are looked up (a value of another type is the schema's to name),
   * so this may read a body that failed its schema.
   */
  async function missingParents (resource: Resource, values: Readonly<Record<string, unknown>>): Promise<ProblemIssue[]> {
    const issues: ProblemIssue[] = []
    for (const link of resource.parents) {
      const id = values[link.foreignKey]
      if (!Number.isSafeInteger(id)) continue
      try {
        const parent = await db.selectFrom(link.parent).select('id').where('id', '=', id as number).executeTakeFirst()
        if (parent === undefined) {
          issues.push(missingParentIssue(link.foreignKey, model.get(link.parent), id as number))
        }
      } catch (error) {
        rethrow(error)
      }
    }
    return issues
  }

  async function referencingChildren (resource: Resource, id: number): Promise<never> {
    const holders: string[] = []
    for (const link of resource.referrers) {
      if (link.onDelete === 'cascade') continue
      const held = countValue(await countOf(db, link.child).where(link.foreignKey, '=', id).executeTakeFirst())
      if (held > 0) holders.push(`${held} ${link.child}`)
    }
    throw stillReferenced(resource, holders)
  }

  return {
    rethrow,
    missingParents,
    async failedWrite (resource, values, error) {
      const violation = dialect.classify(error)
      if (violation?.kind === 'unique') {
        const field = violation.column ?? resource.definition.unique.join(', ')
        throw uniqueClash(resource, field)
      }
      if (violation?.kind === 'foreign-key') {
        const issues = await missingParents(resource, values)
        if (issues.length === 0) throw new Error(`foreign key violation on ${resource.collection} with no missing parent`)
        throw invalid(issues)
      }
      return rethrow(error)
    },
    async failedRemove (resource, id, error) {
      if (dialect.classify(error)?.kind === 'foreign-key') return await referencingChildren(resource, id)
      return rethrow(error)
    }
  }
}
