/**
 * The statements that make a turn's lone writes of one collection at once
 * (write-batches.ts says when, and what happens when one fails): each
 * column's values for all the rows as one array parameter of the column's
 * type, unnested, under the same condition a write alone carries (no active
 * subscription: then it writes nothing, and every write runs again in a
 * transaction with its event). One statement text per collection and column
 * set, prepared once, however many rows.
 *
 * - Creates: `insert … select … from unnest(…) with ordinality … order by`
 *   the position, answered in the order the rows were made.
 * - Edits: `update … from unnest(ids, versions, …)`, each row only on the
 *   version its edit read, answered by id; a row another write changed
 *   since is not written, and its edit runs again in a transaction as it
 *   would alone. No two edits of one record share a statement.
 * - Deletes: `delete … using unnest(ids, versions)`, on the same terms.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Resource } from '../resources/model.js'
import type { Database, Dialect } from './dialect.js'
import { noActiveSubscription } from './outbox.js'
import { rawStatement, type QueryTemplates } from './query-templates.js'
import type { Row, RowCodec } from './row-codec.js'
import type { ColumnKind } from './tables.js'
import { writeBatches } from './write-batches.js'

/** The writes that share one statement: one collection, the same columns written. */
interface WriteGroup {
  readonly resource: Resource
  readonly columns: readonly string[]
  readonly shape: string
}

/** The unnested rows' alias and a create's position, names no field can have. */
const ROWS = 'new rows'
const POSITION = 'position of the row'

type Alone = () => Promise<Row | undefined>

export interface GatheredWrites {
  /**
   * The row created of `values` (the values of `columns`, then the creation
   * time) with the turn's other lone creates of `resource` and these
   * columns; undefined if a subscription was active. `alone` makes it by itself.
   */
  create (resource: Resource, columns: readonly string[], values: readonly unknown[], alone: Alone): Promise<Row | undefined>
  /**
   * The row of record `id` edited from `version` to `values` (the values of
   * `columns`, then the edit's time) with the turn's other lone edits of
   * `resource` and these columns; undefined if it was not written (a
   * subscription was active, or the record changed since it was read).
   */
  edit (resource: Resource, id: number, version: number, columns: readonly string[], values: readonly unknown[], alone: Alone): Promise<Row | undefined>
  /**
   * Record `id` deleted at `version` with the turn's other lone deletes of
   * `resource`: its id (`{ id }`), or undefined if it was not deleted (a
   * subscription was active, or the record changed since it was read).
   */
  remove (resource: Resource, id: number, version: number, alone: Alone): Promise<Row | undefined>
}

/** Where the dialect gathers a turn's writes (PostgreSQL); undefined where every write runs in its writer's transactions (SQLite). */
export function gatheredWrites (dialect: Dialect, codec: RowCodec, templated: QueryTemplates): GatheredWrites | undefined {
  const { manyRows } = dialect
  if (manyRows === undefined || dialect.writesOneAtATime) return undefined
  const db: Kysely<Database> = dialect.db
  const { undone } = manyRows

  const ofRows = (name: string): RawBuilder<unknown> => sql.ref(`${ROWS}.${name}`)
  /** `unnest` of one array parameter per column (in `slots`), as ROWS with these column names. */
  const unnested = (kinds: readonly ColumnKind[], slots: readonly unknown[], names: readonly string[], ordinality = ''): RawBuilder<unknown> =>
    sql`unnest(${sql.join(kinds.map((kind, i) => manyRows.array(kind, slots[i])))}) ${sql.raw(ordinality)} as ${sql.id(ROWS)}(${sql.join(names.map(name => sql.id(name)))})`
  const columnsOf = (rows: ReadonlyArray<readonly unknown[]>, count: number): unknown[][] => Array.from({ length: count }, (_, i) => rows.map(values => values[i]))
  const kindsOf = (resource: Resource, columns: readonly string[]): ColumnKind[] => columns.map(column => codec.kind(resource, column))
  /** The rows of `table` that ROWS names by id, at the version each write read, while no subscription is active. */
  const onTheVersionRead = (table: string): RawBuilder<unknown> =>
    sql`${sql.ref(`${table}.id`)} = ${ofRows('id')} and ${sql.ref(`${table}.version`)} = ${ofRows('version')} and ${noActiveSubscription}`
  /** What a statement wrote, by id, for each of `rows` (whose first value is the id): undefined where it wrote nothing. */
  const byIdOf = (written: readonly Row[], rows: ReadonlyArray<readonly unknown[]>): Array<Row | undefined> => {
    const found = new Map(written.map(row => [Number(row.id), row]))
    return rows.map(([id]) => found.get(id as number))
  }

  const creates = writeBatches<WriteGroup, Row>({
    undone,
    async writeMany ({ resource, columns, shape }, rows) {
      const names = [...columns, 'createdAt']
      const query = templated(shape, columnsOf(rows, names.length), slots => db.insertInto(resource.collection)
        .columns([...columns, 'version', 'createdAt', 'updatedAt'])
        .expression(sql`select ${sql.join(columns.map(ofRows))}, 1, ${ofRows('createdAt')}, ${ofRows('createdAt')}
          from ${unnested([...kindsOf(resource, columns), 'timestamp'], slots, [...names, POSITION], 'with ordinality')}
          where ${noActiveSubscription} order by ${ofRows(POSITION)}`)
        .returning(codec.columns(resource)))
      const created = (await db.executeQuery<Row>(query)).rows
      // All or none: the statement's one condition holds for every row. (Another count fails them all.)
      return created.length === 0 ? rows.map(() => undefined) : created
    }
  })

  const edits = writeBatches<WriteGroup, Row>({
    undone,
    distinct: ([id]) => id,
    async writeMany ({ resource, columns, shape }, rows) {
      const table = resource.collection
      const names = ['id', 'version', ...columns, 'updatedAt']
      const query = templated(shape, columnsOf(rows, names.length), slots => rawStatement(db, sql`update ${sql.table(table)}
        set ${sql.join([...columns, 'updatedAt'].map(column => sql`${sql.id(column)} = ${ofRows(column)}`))}, version = ${sql.ref(`${table}.version`)} + 1
        from ${unnested(['id', 'integer', ...kindsOf(resource, columns), 'timestamp'], slots, names)}
        where ${onTheVersionRead(table)}
        returning ${sql.join(codec.columns(resource).map(column => sql.ref(`${table}.${column}`)))}`))
      return byIdOf((await db.executeQuery<Row>(query)).rows, rows)
    }
  })

  const removals = writeBatches<WriteGroup, Row>({
    undone,
    // Two deletes of one record in one statement would both be answered by its one deleted row.
    distinct: ([id]) => id,
    async writeMany ({ resource, shape }, rows) {
      const table = resource.collection
      const query = templated(shape, columnsOf(rows, 2), slots => rawStatement(db, sql`delete from ${sql.table(table)}
        using ${unnested(['id', 'integer'], slots, ['id', 'version'])}
        where ${onTheVersionRead(table)}
        returning ${sql.ref(`${table}.id`)}`))
      return byIdOf((await db.executeQuery<Row>(query)).rows, rows)
    }
  })

  // A group by identity: one per collection, kind of write and column set.
  const groups = new Map<string, WriteGroup>()
  function groupOf (kind: 'insert' | 'update' | 'delete', resource: Resource, columns: readonly string[]): WriteGroup {
    const shape = `${kind} many ${resource.collection} ${columns.join(' ')}`
    let group = groups.get(shape)
    if (group === undefined) groups.set(shape, group = { resource, columns, shape })
    return group
  }

  return {
    create: async (resource, columns, values, alone) => await creates.write(groupOf('insert', resource, columns), values, alone),
    edit: async (resource, id, version, columns, values, alone) => await edits.write(groupOf('update', resource, columns), [id, version, ...values], alone),
    remove: async (resource, id, version, alone) => await removals.write(groupOf('delete', resource, []), [id, version], alone)
  }
}
