/**
 * Hot queries are built and compiled by Kysely once per shape, then only
 * their values change. Building a query tree and compiling it to SQL cost
 * more than SQLite's own lookup by primary key, and the shapes are few: they
 * come from the definitions, not from the request's values.
 */
import type { Compilable, CompiledQuery, Kysely, RawBuilder } from 'kysely'
import { BoundedMap } from '../bounded-map.js'

interface Template {
  readonly compiled: CompiledQuery
  /** For each bound parameter, which value fills it (or -1: a constant of the shape). */
  readonly slots: readonly number[]
}

/** A stand-in value, recognised by identity among the compiled parameters. */
class Slot {
  constructor (readonly index: number) {}
}

/** A statement written as SQL, compiled for `executor`'s dialect when a template asks for it. */
export const rawStatement = <DB>(executor: Kysely<DB>, statement: RawBuilder<unknown>): Compilable => ({ compile: () => statement.compile(executor) })

export type QueryTemplates = (shape: string, values: readonly unknown[], build: (slots: readonly unknown[]) => Compilable) => CompiledQuery

export function queryTemplates (maxShapes = 1000): QueryTemplates {
  const templates = new BoundedMap<string, Template>(maxShapes)
  return (shape, values, build) => {
    const { compiled, slots } = templates.remember(shape, () => {
      const stand = values.map((_, index) => new Slot(index))
      const compiled = build(stand).compile()
      return { compiled, slots: compiled.parameters.map(parameter => parameter instanceof Slot ? parameter.index : -1) }
    })
    return { ...compiled, parameters: slots.map((slot, position) => slot === -1 ? compiled.parameters[position] : values[slot]) }
  }
}
