/**
 * Queries on the rows matching conditions, shared by a store's reads and
 * writes: compiled once per shape when the conditions are all equalities (by
 * id, version, owner: every hot read and write), else built afresh.
 */
import type { Compilable, CompiledQuery } from 'kysely'
import type { Condition } from '../resources/define.js'
import type { Resource } from '../resources/model.js'
import type { ConditionSql, Where } from './conditions.js'
import type { QueryTemplates } from './query-templates.js'
import type { RowCodec } from './row-codec.js'
import type { WriteOptions } from './store.js'

/**
 * The query `build` makes on the rows of `resource` matching `conditions`.
 * `shape` names it among the compiled ones; `build` gets the leading values
 * (or stand-ins for them) and the where clause.
 */
export type CompileMatching = (
  resource: Resource, shape: string, conditions: readonly Condition[], leading: readonly unknown[],
  build: (values: readonly unknown[], where: Where) => Compilable
) => CompiledQuery

export function matchingQueries (codec: RowCodec, { matching }: Pick<ConditionSql, 'matching'>, templated: QueryTemplates): CompileMatching {
  return (resource, shape, conditions, leading, build) => {
    if (!conditions.every(item => item.op === 'eq')) return build(leading, matching(resource, conditions)).compile()
    const values = [...leading, ...conditions.map(item => codec.encode(resource, item.field, item.value))]
    return templated(`${shape} where ${conditions.map(item => item.field).join(' ')}`, values,
      slots => build(slots, eb => eb.and(conditions.map((item, i) => eb(eb.ref(item.field), '=', slots[leading.length + i])))))
  }
}

/** The conditions on record `id` as a caller may see it (`options.where`: an owner's narrowed view). */
export const byId = (id: number, options?: WriteOptions): Condition[] => [{ field: 'id', op: 'eq', value: id }, ...(options?.where ?? [])]
