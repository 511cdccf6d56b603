/**
 * Which index a filtered, sorted page reads, where the database's planner
 * cannot be trusted to choose (SQLite, `Dialect.unindexed`).
 *
 * Asked for `?status=todo&sort=-priority` or `?priority=3&sort=name`, SQLite
 * reads every match through the filter's index and sorts them, whatever their
 * number: a third of the table for `status=todo` (12 ms a page at 100,000
 * tasks, holding up the process), where reading the sort's index in order and
 * skipping the rows that do not match fills the page after about 60 entries
 * (50 µs). Which is cheaper depends on how many rows match. With the matches
 * spread evenly, the page's rows come after about (offset + limit) × rows /
 * matches entries of the sort's index, against all the matches read and sorted
 * through the filter's: the sort's index wins where matches² > (offset +
 * limit) × rows, that is where more than the square root of that product
 * match. So the store counts the matches only up to that bound: exactly from
 * the tallies where they answer (value-counts.ts), else by reading at most
 * that many entries of the filter's own plan, which costs no more than the
 * plan it may replace, and is remembered until the data changes.
 *
 * Equalities (`eq`, `in`) only: SQLite already takes the sort's index for a
 * range. A sort on `id` is left alone: every index on a filterable column
 * ends in `id`, so an equality's index gives that order itself.
 */
import type { Condition } from '../resources/define.js'
import type { Resource } from '../resources/model.js'
import type { Unindexed } from './conditions.js'
import type { ListQuery } from './store.js'

export interface IndexChoiceSources {
  /** The collection's rows. */
  rows (resource: Resource): Promise<number>
  /** How many rows match every condition, or `bound` if at least that many do. */
  matchesUpTo (resource: Resource, where: readonly Condition[], bound: number): Promise<number>
}

export type IndexChoice = (resource: Resource, query: ListQuery) => Promise<Unindexed | undefined>

/** The columns whose index a page must not read: its equalities' columns, when enough rows match all its conditions. */
export function indexChoice ({ rows, matchesUpTo }: IndexChoiceSources): IndexChoice {
  return async (resource, query) => {
    const first = query.orderBy[0]?.field
    if (first === undefined || first === 'id') return undefined
    const equalities = new Set(query.where.filter(item => (item.op === 'eq' || item.op === 'in') && item.field !== first).map(item => item.field))
    if (equalities.size === 0) return undefined
    // More matches than this: reading the sort's index is the cheaper (see above).
    const bound = Math.floor(Math.sqrt((query.offset + query.limit) * await rows(resource))) + 1
    return await matchesUpTo(resource, query.where, bound) >= bound ? equalities : undefined
  }
}
