/**
 * The statements that make a turn's writes of one collection at once
 * (write-batches.ts says when, and what happens when one fails): each
 * column's values for all the rows as one array parameter of the column's
 * type, unnested. One statement text per collection and column set, prepared
 * once, however many rows. They gather two kinds of writes:
 *
 * - Lone writes, on the pool, each committing by itself: under the same
 *   condition a write alone carries (no active subscription: then it writes
 *   nothing, and every write runs again in a transaction with its event).
 * - The writes of a shared transaction (shared-transactions.ts), with no
 *   condition, and their events: one outbox insert for all of them, which
 *   adds its rows only while some subscription is active.
 *
 * - Creates: `insert … select … from unnest(…) with ordinality … order by`
 *   the position, answered in the order the rows were made.
 * - Edits: `update … from unnest(ids, versions, …)`, each row only on the
 *   version its edit read, answered by id; a row another write changed
 *   since is not written, and its edit runs again in a transaction as it
 *   would alone. No two edits of one record share a statement.
 * - Deletes: `delete … using unnest(ids, versions)`, on the same terms.
 */
import { sql, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely'
import type { Resource } from '../resources/model.js'
import type { Database, Dialect } from './dialect.js'
import { activeSubscription, EVENT_COLUMNS, noActiveSubscription } from './outbox.js'
import { rawStatement, type QueryTemplates } from './query-templates.js'
import type { Row, RowCodec } from './row-codec.js'
import type { ColumnKind } from './tables.js'
import { EVENTS_TABLE } from './webhook-tables.js'
import { columnsOf, unnestedRows } from './unnested-rows.js'
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
  /**
   * Adds the outbox row of one event (`eventValues`) with the turn's other
   * events, if some subscription is active: whether it did. `alone` adds it
   * by itself.
   */
  event (values: readonly unknown[], alone: () => Promise<boolean>): Promise<boolean>
}

/**
 * Gathers the writes sent on `executor`: on the pool (`lone`), each
 * statement under the condition of writes running alone; or on one shared
 * transaction, with none.
 */
export type GatherOn = (executor: Kysely<Database>, lone: boolean) => GatheredWrites

/** Where the dialect gathers a turn's writes (PostgreSQL); undefined where every write runs in its writer's transactions (SQLite). */
export function writeGathering (dialect: Dialect, codec: RowCodec, templated: QueryTemplates): GatherOn | undefined {
  const { manyRows } = dialect
  if (manyRows === undefined || dialect.writesOneAtATime) return undefined
  const { undone } = manyRows

  const { of: ofRows, from: unnested } = unnestedRows(manyRows.array, ROWS)
  const kindsOf = (resource: Resource, columns: readonly string[]): ColumnKind[] => columns.map(column => codec.kind(resource, column))
  /** The rows of `table` that ROWS names by id, at the version each write read, under `condition`. */
  const onTheVersionRead = (table: string, condition: Expression<SqlBool>): RawBuilder<unknown> =>
    sql`${sql.ref(`${table}.id`)} = ${ofRows('id')} and ${sql.ref(`${table}.version`)} = ${ofRows('version')} and ${condition}`
  /**
   * Rows (whose first value is the id) in the order of their ids: two
   * statements that write some of the same records then lock them in the
   * same order, and do not deadlock.
   */
  const inIdOrder = (rows: ReadonlyArray<readonly unknown[]>): ReadonlyArray<readonly unknown[]> => [...rows].sort(([a], [b]) => (a as number) - (b as number))
  /** What a statement wrote, by id, for each of `rows` (whose first value is the id): undefined where it wrote nothing. */
  const byIdOf = (written: readonly Row[], rows: ReadonlyArray<readonly unknown[]>): Array<Row | undefined> => {
    const found = new Map(written.map(row => [Number(row.id), row]))
    return rows.map(([id]) => found.get(id as number))
  }

  // A group by identity: one per collection, kind of write and column set, and whether the writes are lone ones.
  const groups = new Map<string, WriteGroup>()
  function groupOf (kind: string, resource: Resource, columns: readonly string[]): WriteGroup {
    const shape = `${kind} many ${resource.collection} ${columns.join(' ')}`
    let group = groups.get(shape)
    if (group === undefined) groups.set(shape, group = { resource, columns, shape })
    return group
  }

  return (db, lone) => {
    // Lone writes change nothing while a subscription is active; a shared transaction's add their events.
    const condition = lone ? noActiveSubscription : sql<SqlBool>`true`
    const kindOf = lone ? 'lone' : 'shared'
    const creates = writeBatches<WriteGroup, Row>({
      undone,
      async writeMany ({ resource, columns, shape }, rows) {
        const names = [...columns, 'createdAt']
        const query = templated(shape, columnsOf(rows, names.length), slots => db.insertInto(resource.collection)
          .columns([...columns, 'version', 'createdAt', 'updatedAt'])
          .expression(sql`select ${sql.join(columns.map(ofRows))}, 1, ${ofRows('createdAt')}, ${ofRows('createdAt')}
            from ${unnested([...kindsOf(resource, columns), 'timestamp'], slots, [...names, POSITION], true)}
            where ${condition} order by ${ofRows(POSITION)}`)
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
        const query = templated(shape, columnsOf(inIdOrder(rows), names.length), slots => rawStatement(db, sql`update ${sql.table(table)}
          set ${sql.join([...columns, 'updatedAt'].map(column => sql`${sql.id(column)} = ${ofRows(column)}`))}, version = ${sql.ref(`${table}.version`)} + 1
          from ${unnested(['id', 'integer', ...kindsOf(resource, columns), 'timestamp'], slots, names)}
          where ${onTheVersionRead(table, condition)}
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
        const query = templated(shape, columnsOf(inIdOrder(rows), 2), slots => rawStatement(db, sql`delete from ${sql.table(table)}
          using ${unnested(['id', 'integer'], slots, ['id', 'version'])}
          where ${onTheVersionRead(table, condition)}
          returning ${sql.ref(`${table}.id`)}`))
        return byIdOf((await db.executeQuery<Row>(query)).rows, rows)
      }
    })

    // One group: every event has the same columns.
    const events = writeBatches<typeof EVENT_COLUMNS, boolean>({
      undone,
      async writeMany (columns, rows) {
        const query = templated(`${kindOf} many events`, columnsOf(rows, columns.length), slots => rawStatement(db, sql`insert into ${sql.table(EVENTS_TABLE)}
          (${sql.join(columns.map(column => sql.id(column)))}, ${sql.ref('fannedOut')})
          select ${sql.join(columns.map(ofRows))}, 0 from ${unnested(columns.map(() => 'string'), slots, columns)}
          where ${activeSubscription}`))
        const added = (await db.executeQuery(query)).numAffectedRows ?? 0n
        // All or none: the statement's one condition holds for every row.
        return rows.map(() => added > 0n)
      }
    })

    return {
      create: async (resource, columns, values, alone) => await creates.write(groupOf(`${kindOf} insert`, resource, columns), values, alone),
      edit: async (resource, id, version, columns, values, alone) => await edits.write(groupOf(`${kindOf} update`, resource, columns), [id, version, ...values], alone),
      remove: async (resource, id, version, alone) => await removals.write(groupOf(`${kindOf} delete`, resource, []), [id, version], alone),
      event: async (values, alone) => await events.write(EVENT_COLUMNS, values, alone) === true
    }
  }
}
