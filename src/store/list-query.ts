/**
 * A page of a collection as one query: its conditions, its order (NULLS LAST
 * only where a value can be missing) and its window, or, after a cursor's
 * position, the union of the index ranges beyond it; or, where the store can
 * read several queries in one snapshot, those ranges as queries of their own,
 * to be read in turn until the page is full; or, deep in a collection read
 * without conditions, the page's ids first and then its rows. Compiled once
 * per shape when every condition is a comparison.
 */
import type { CompiledQuery, Kysely, SelectQueryBuilder } from 'kysely'
import type { Resource } from '../resources/model.js'
import { COMPARISONS, type ConditionSql, type Unindexed, type Where } from './conditions.js'
import type { Database } from './dialect.js'
import type { QueryTemplates } from './query-templates.js'
import type { Row, RowCodec } from './row-codec.js'
import type { ListQuery } from './store.js'

/** A select of whole rows, from a table or from a union of ranges of one. */
type RowSelect = SelectQueryBuilder<Database, string, Row>

/**
 * The queries of a page: one, or where the store reads in ranges, after a
 * position that more than one index range follows, one per range in the order their rows come,
 * each up to the page's length. Reading the union instead read every range in
 * full (and whole rows) and sorted them again: 214 µs against 84 for the first
 * range alone, on SQLite with 100,000 tasks after a position on `dueDate`.
 */
export type PageQuery = (resource: Resource, query: ListQuery, unindexed?: Unindexed) => CompiledQuery[]

/**
 * From this offset on, a page with no conditions is found by its sort keys
 * alone and only its own rows are read (a deferred join). An offset is
 * skipped row by row either way, but the keys come from the sort's index
 * (an index-only scan on PostgreSQL, a covering index on SQLite) while a
 * whole row is a visit to the table: with 100,000 tasks, `page=4000` took
 * PostgreSQL 11.8 ms by `id` and 16.1 by `-priority`, against 6.4 and 7.5,
 * and SQLite 1.27 ms by `-dueDate` against 0.54 (by `id`, where the table is
 * its own index, the same). Below it the rows skipped cost too little to
 * matter, and one shape per sort is enough.
 */
export const DEFERRED_FROM_OFFSET = 1000

/** `inRanges`: the store can read several queries in one snapshot (`Dialect.inOneSnapshot`). */
export function listQuery (db: Kysely<Database>, codec: RowCodec, clauses: ConditionSql, templated: QueryTemplates, inRanges: boolean): PageQuery {
  return (resource, query, unindexed) => {
    const { where, orderBy } = query
    const deep = where.length === 0 && query.after === undefined && query.offset >= DEFERRED_FROM_OFFSET
    const position = query.after?.map((value, i) => value === null || value === undefined ? null : codec.encode(resource, orderBy[i]!.field, value))

    /** `select` in the page's order, by the sort keys of `table` when given (a join has two tables' keys). */
    const ordered = <Q extends RowSelect>(select: Q, table?: string): Q => {
      for (const key of orderBy) {
        codec.kind(resource, key.field)
        const column = table === undefined ? key.field : `${table}.${key.field}`
        // NULLS LAST only where a value can be missing: on a NOT NULL column it would keep PostgreSQL from reading a descending order off the index.
        select = (codec.nullable(resource, key.field)
          ? select.orderBy(column, order => key.direction === 'asc' ? order.asc().nullsLast() : order.desc().nullsLast())
          : select.orderBy(column, key.direction)) as Q
      }
      return select
    }
    const matches = (conditions: Where, branch?: Where): RowSelect => {
      let select = db.selectFrom(resource.collection).select(codec.columns(resource))
      if (where.length > 0) select = select.where(conditions)
      return branch === undefined ? select : select.where(branch)
    }
    /**
     * The page's ids and sort keys, then its rows joined to them, in the ids' order: both databases
     * read the join in that order and sort nothing (`test/store/sort-plans.test.ts`).
     */
    const deferred = (limit: number, offset: number) => {
      const keys = [...new Set(['id', ...orderBy.map(key => key.field)])]
      const positions = ordered(db.selectFrom(resource.collection).select(keys)).limit(limit).offset(offset).as('page')
      return ordered(db.selectFrom(positions).innerJoin(`${resource.collection} as row`, 'row.id', 'page.id')
        .select(codec.columns(resource).map(column => `row.${column}`)) as unknown as RowSelect, 'page')
    }
    /** The page, or with `range`, that range of it alone. */
    const build = (conditions: Where, from: readonly unknown[] | undefined, limit: number, offset: number, range?: number) => {
      const branches = from === undefined ? [] : clauses.keyset(resource, orderBy, from)
      if (range !== undefined) return ordered(matches(conditions, branches[range])).limit(limit)
      if (deep) return deferred(limit, offset)
      if (from === undefined || branches.length === 1) return ordered(matches(conditions, branches[0])).limit(limit).offset(offset)
      // After a position: each branch is one index range, read in order up to the page's length;
      // the page is the first of their union, sorted again (a few dozen rows at most).
      const ranges = branches.map((branch, i) => db.selectFrom(ordered(matches(conditions, branch)).limit(limit).as(`range${i}`)).select(codec.columns(resource)))
      const union = ranges.slice(1).reduce((all, range) => all.unionAll(range), ranges[0]!)
      return ordered(db.selectFrom(union.as('after')).select(codec.columns(resource))).limit(limit).offset(offset)
    }

    const page = (range?: number): CompiledQuery => {
      // Comparisons (every named filter of the examples) compile once per shape; `in` and `like` are built each time.
      if (!where.every(item => item.op in COMPARISONS)) return build(clauses.matching(resource, where, unindexed), position, query.limit, query.offset, range).compile()
      const shape = `list ${resource.collection} ${where.map(item => `${unindexed?.has(item.field) === true ? '+' : ''}${item.field} ${item.op}`).join(' ')} after ${position?.map(value => value === null ? 'null' : '?').join(' ') ?? '-'} by ${orderBy.map(key => `${key.field} ${key.direction}`).join(' ')}${range === undefined ? '' : ` range ${range}`}${deep ? ' deferred' : ''}`
      return templated(shape, [...where.map(item => codec.encode(resource, item.field, item.value)), ...(position ?? []), query.limit, query.offset],
        slots => build(
          eb => eb.and(where.map((item, i) => eb(clauses.tested(eb, item.field, unindexed), COMPARISONS[item.op as keyof typeof COMPARISONS], slots[i]))),
          position?.map((value, i) => value === null ? null : slots[where.length + i]),
          slots[slots.length - 2] as number, slots[slots.length - 1] as number, range))
    }
    // A cursor's page starts at its position (no offset), so its ranges can be read one after another.
    const ranges = inRanges && position !== undefined && query.offset === 0 ? clauses.keyset(resource, orderBy, position).length : 0
    return ranges > 1 ? Array.from({ length: ranges }, (_, range) => page(range)) : [page()]
  }
}
