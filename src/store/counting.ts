/**
 * How many records match a list's conditions: a whole collection's count
 * from its tally (row-counts.ts), one filtered on a tallied column from the
 * value tallies (value-counts.ts), any other by counting; each remembered
 * while the data is unchanged (stamped-cache.ts).
 */
import { sql, type Kysely } from 'kysely'
import type { Condition } from '../resources/define.js'
import type { Model, Resource } from '../resources/model.js'
import type { ConditionSql } from './conditions.js'
import type { Database } from './dialect.js'
import type { Reads } from './reads.js'
import type { RowCodec } from './row-codec.js'
import { countOf, countValue, rowCountQuery } from './row-counts.js'
import { stampedCache } from './stamped-cache.js'
import type { TableSpec } from './tables.js'
import { readValueTally, tallyCount, talliedColumn, valueKey } from './value-counts.js'

export interface Counting {
  count: (resource: Resource, where: readonly Condition[]) => Promise<number>
  /** Rows matching `where`, or `bound` if at least that many do: from the tallies where they answer, else reading at most `bound` of them. */
  matchesUpTo: (resource: Resource, where: readonly Condition[], bound: number) => Promise<number>
}

export interface CountingParts {
  readonly db: Kysely<Database>
  readonly model: Model
  readonly specs: ReadonlyMap<string, TableSpec>
  readonly codec: RowCodec
  readonly clauses: ConditionSql
  readonly reads: Reads
  readonly rethrow: (error: unknown) => never
}

export function counting ({ db, model, specs, codec, clauses, reads, rethrow }: CountingParts): Counting {
  const counts = stampedCache<number>()
  const rowCounts = new Map(model.resources.map(resource => [resource.collection, rowCountQuery(db, resource.collection)]))
  const tallied = new Map([...specs].map(([collection, spec]) => [collection, new Set(spec.tallied)]))
  const { read, remembered } = reads

  async function count (resource: Resource, where: readonly Condition[]): Promise<number> {
    return await remembered(counts, `${resource.collection} ${JSON.stringify(where)}`, async () => {
      if (where.length === 0) return countValue((await read(rowCounts.get(resource.collection)!))[0])
      const column = talliedColumn(tallied.get(resource.collection)!, where)
      if (column !== undefined) {
        return tallyCount(await readValueTally(db, resource.collection, column).catch(rethrow), where, value => valueKey(codec.encode(resource, column, value)))
      }
      return countValue(await countOf(db, resource.collection).where(clauses.matching(resource, where)).executeTakeFirst().catch(rethrow))
    })
  }

  return {
    count,
    async matchesUpTo (resource, where, bound) {
      if (where.length === 0 || talliedColumn(tallied.get(resource.collection)!, where) !== undefined) return Math.min(await count(resource, where), bound)
      return await remembered(counts, `${resource.collection} ${JSON.stringify(where)} up to ${bound}`, async () => {
        const some = db.selectFrom(resource.collection).select(sql<number>`1`.as('one')).where(clauses.matching(resource, where)).limit(bound)
        return countValue((await read(db.selectFrom(some.as('some')).select(eb => eb.fn.countAll<number>().as('n')).compile()))[0])
      })
    }
  }
}
