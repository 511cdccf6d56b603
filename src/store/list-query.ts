/**
 * A page of a collection as one query: its conditions, its order (NULLS LAST
 * only where a value can be missing) and its window, or, after a cursor's
 * position, the union of the index ranges beyond it; or, where the store can
 * read several queries in one snapshot, those ranges as queries of their own,
 * to be read in turn until the page is full. Compiled once per shape when
 * every condition is a comparison.
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

/** `inRanges`: the store can read several queries in one snapshot (`Dialect.inOneSnapshot`). */
export function listQuery (db: Kysely<Database>, codec: RowCodec, clauses: ConditionSql, templated: QueryTemplates, inRanges: boolean): PageQuery {
  return (resource, query, unindexed) => {
    const { where, orderBy } = query
    const position = query.after?.map((value, i) => value === null || value === undefined ? null : codec.encode(resource, orderBy[i]!.field, value))

    const ordered = <Q extends RowSelect>(select: Q): Q => {
      for (const key of orderBy) {
        codec.kind(resource, key.field)
        // NULLS LAST only where a value can be missing: on a NOT NULL column it would keep PostgreSQL from reading a descending order off the index.
        select = (codec.nullable(resource, key.field)
          ? select.orderBy(key.field, order => key.direction === 'asc' ? order.asc().nullsLast() : order.desc().nullsLast())
          : select.orderBy(key.field, key.direction)) as Q
      }
      return select
    }
    const matches = (conditions: Where, branch?: Where): RowSelect => {
      let select = db.selectFrom(resource.collection).select(codec.columns(resource))
      if (where.length > 0) select = select.where(conditions)
      return branch === undefined ? select : select.where(branch)
    }
    /** The page, or with `range`, that range of it alone. */
    const build = (conditions: Where, from: readonly unknown[] | undefined, limit: number, offset: number, range?: number) => {
      const branches = from === undefined ? [] : clauses.keyset(resource, orderBy, from)
      if (range !== undefined) return ordered(matches(conditions, branches[range])).limit(limit)
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
      const shape = `list ${resource.collection} ${where.map(item => `${unindexed?.has(item.field) === true ? '+' : ''}${item.field} ${item.op}`).join(' ')} after ${position?.map(value => value === null ? 'null' : '?').join(' ') ?? '-'} by ${orderBy.map(key => `${key.field} ${key.direction}`).join(' ')}${range === undefined ? '' : ` range ${range}`}`
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
