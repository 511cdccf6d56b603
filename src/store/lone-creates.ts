/**
 * The statement that makes a turn's lone creates of one collection at once
 * (create-batches.ts says when, and what happens when it fails): each column's
 * values for all the rows as one array parameter of the column's type,
 * unnested in the order the creates came, under the same condition a create
 * alone carries (no active subscription: then it creates nothing, and every
 * create runs again in a transaction with its event). One statement text per
 * collection and column set, prepared once, however many rows.
 */
import { sql, type Kysely } from 'kysely'
import type { Resource } from '../resources/model.js'
import { createBatches } from './create-batches.js'
import type { Database, Dialect } from './dialect.js'
import { noActiveSubscription } from './outbox.js'
import type { QueryTemplates } from './query-templates.js'
import type { Row, RowCodec } from './row-codec.js'
import type { ColumnKind } from './tables.js'

/** The creates that share one statement: one collection, the same columns set. */
interface CreateGroup {
  readonly resource: Resource
  readonly columns: readonly string[]
  readonly shape: string
}

/** The unnested rows' alias and their position, names no field can have. */
const ROWS = 'new rows'
const POSITION = 'position of the row'

export interface LoneCreates {
  /**
   * The row created of `values` (the values of `columns`, then the creation
   * time) with the turn's other lone creates of `resource` and these
   * columns; undefined if a subscription was active. `alone` makes it by itself.
   */
  create (resource: Resource, columns: readonly string[], values: readonly unknown[], alone: () => Promise<Row | undefined>): Promise<Row | undefined>
}

/** Where the dialect gathers a turn's creates (PostgreSQL); undefined where every write runs in its writer's transactions (SQLite). */
export function loneCreates (dialect: Dialect, codec: RowCodec, templated: QueryTemplates): LoneCreates | undefined {
  const { manyRows } = dialect
  if (manyRows === undefined || dialect.writesOneAtATime) return undefined
  const db: Kysely<Database> = dialect.db

  const batches = createBatches<CreateGroup, Row>({
    undone: manyRows.undone,
    async insertMany ({ resource, columns, shape }, rows) {
      const names = [...columns, 'createdAt']
      const kinds: ColumnKind[] = [...columns.map(column => codec.kind(resource, column)), 'timestamp']
      const row = (name: string) => sql.ref(`${ROWS}.${name}`)
      const query = templated(shape, names.map((_, i) => rows.map(values => values[i])), slots => db.insertInto(resource.collection)
        .columns([...columns, 'version', 'createdAt', 'updatedAt'])
        .expression(sql`select ${sql.join(columns.map(row))}, 1, ${row('createdAt')}, ${row('createdAt')}
          from unnest(${sql.join(kinds.map((kind, i) => manyRows.array(kind, slots[i])))}) with ordinality
            as ${sql.id(ROWS)}(${sql.join([...names, POSITION].map(name => sql.id(name)))})
          where ${noActiveSubscription} order by ${row(POSITION)}`)
        .returning(codec.columns(resource)))
      return (await db.executeQuery<Row>(query)).rows
    }
  })

  // A group by identity: one per collection and column set (a record of an owned collection has its owner, or not).
  const groups = new Map<string, CreateGroup>()
  function groupOf (resource: Resource, columns: readonly string[]): CreateGroup {
    const shape = `insert many ${resource.collection} ${columns.join(' ')}`
    let group = groups.get(shape)
    if (group === undefined) groups.set(shape, group = { resource, columns, shape })
    return group
  }

  return {
    create: async (resource, columns, values, alone) => await batches.create(groupOf(resource, columns), values, alone)
  }
}
