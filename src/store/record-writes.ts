/**
 * A record's writes, shared by every dialect: a create, an edit and a delete,
 * each with its outbox event (event-writes.ts), an edit or delete landing
 * only on the version it read, and an edit setting only the columns it
 * changes. Database errors become the client's problems (store-errors.ts).
 */
import { sql, type Kysely } from 'kysely'
import { IdempotencyInProgress } from '../errors.js'
import type { Condition } from '../resources/define.js'
import type { Model, Resource } from '../resources/model.js'
import { cascadedIds, cascades } from './cascade.js'
import type { Database, Dialect } from './dialect.js'
import { eventWrites, NEEDS_TRANSACTION, type Outbox, type WriteSteps } from './event-writes.js'
import { markCreated } from './idempotency.js'
import { sharedTransactions } from './shared-transactions.js'
import { writeGathering } from './gathered-writes.js'
import { byId, type CompileMatching } from './matching-queries.js'
import type { QueryTemplates } from './query-templates.js'
import type { Row, RowCodec } from './row-codec.js'
import type { Edit, InsertOptions, Store, StoredRecord, WriteMiss, WriteOptions } from './store.js'
import type { StoreErrors } from './store-errors.js'

/** `{ column: value }` for columns and the values at the same positions. */
function namedSlots (columns: readonly string[], values: readonly unknown[]): Row {
  const row: Row = {}
  columns.forEach((column, i) => { row[column] = values[i] })
  return row
}

const sameVersion = (current: StoredRecord, options?: WriteOptions): Condition[] => [...byId(current.id, options), { field: 'version', op: 'eq', value: current.version }]

/** A compiled shape's name for a write running alone (its statement carries the condition) or in a transaction. */
const aloneOrNot = (shape: string, unwatched: unknown): string => unwatched === undefined ? shape : `${shape} alone`

/**
 * What a write that found nothing to change on the version it read answers:
 * in a transaction, a lost race (the caller reads again); alone, perhaps
 * only a subscription, so it runs again in a transaction.
 */
const nothingChanged = (unwatched: unknown): 'raced' | typeof NEEDS_TRANSACTION => unwatched === undefined ? 'raced' : NEEDS_TRANSACTION

type RecordWrite<T> = (w: Kysely<Database>, outbox: Outbox, current: StoredRecord, row: Row) => Promise<T | WriteMiss | typeof NEEDS_TRANSACTION>

export interface RecordWritesContext {
  readonly dialect: Dialect
  readonly model: Model
  readonly codec: RowCodec
  readonly templated: QueryTemplates
  readonly compileMatching: CompileMatching
  readonly errors: Pick<StoreErrors, 'failedWrite' | 'failedRemove'>
  /** How a write reads the row of record `id` it starts from. */
  readonly rowForWrite: (resource: Resource, id: number, options?: WriteOptions) => WriteSteps<Row | undefined, unknown>['read']
}

export function recordWrites ({ dialect, model, codec, templated, compileMatching, errors, rowForWrite }: RecordWritesContext): Pick<Store, 'insert' | 'update' | 'remove' | 'onEventsEnqueued'> {
  // Where writes interleave (a pool), a write's read need not be in its transaction, and a write of one statement may commit alone.
  // Where each write is a round trip, a turn's lone writes of one collection share a statement, and its writes with events a transaction.
  const gatherOn = writeGathering(dialect, codec, templated)
  const gathering = gatherOn === undefined || dialect.manyRows === undefined ? undefined : { shared: sharedTransactions(dialect.db, dialect.manyRows.undone), on: gatherOn }
  const writes = eventWrites(dialect.writer, templated, dialect.writesOneAtATime ? undefined : { db: dialect.db, gathering })

  /**
   * What deleting `id` will take with it. Where writes can interleave, the
   * record is locked first: a child added concurrently would otherwise be
   * cascaded without being seen here, so without an event.
   */
  /** The steps of a write to record `id`: its row read, then 'missing' if there was none, else `write` on the record as read. */
  function onRecord<T> (resource: Resource, id: number, options: WriteOptions | undefined, write: RecordWrite<T>): WriteSteps<Row | undefined, T | WriteMiss> {
    return {
      read: rowForWrite(resource, id, options),
      write: async (w, outbox, row) => row === undefined ? 'missing' : await write(w, outbox, codec.decode(resource, row), row)
    }
  }

  async function cascadedDeletes (w: Kysely<Database>, resource: Resource, id: number): Promise<Map<string, number[]>> {
    if (!dialect.writesOneAtATime) await w.selectFrom(resource.collection).select('id').where('id', '=', id).forUpdate().execute()
    return await cascadedIds(w, model, resource, id)
  }

  return {
    onEventsEnqueued: writes.onEnqueued,

    async insert (resource: Resource, values: Readonly<Record<string, unknown>>, options?: InsertOptions): Promise<StoredRecord> {
      const fields = codec.encodeFields(resource, values)
      const columns = Object.keys(fields)
      const now = new Date().toISOString()
      try {
        return await writes.run({
          read: async () => undefined,
          write: async (w, outbox) => {
            const { unwatched, gathered } = outbox
            // The columns' values, then the creation time.
            const rowValues = [...Object.values(fields), now]
            const insertRow = async (): Promise<Row | undefined> => (await w.executeQuery<Row>(compileMatching(resource, aloneOrNot(`insert ${resource.collection} ${columns.join(' ')}`, unwatched), [], rowValues, slots => {
              const row = { ...namedSlots(columns, slots), version: 1, createdAt: slots[columns.length], updatedAt: slots[columns.length] }
              const insert = w.insertInto(resource.collection)
              // Alone, the row's values are selected under the condition (PostgreSQL types each by its column).
              return (unwatched === undefined
                ? insert.values(row)
                : insert.columns(Object.keys(row)).expression(w.selectNoFrom(Object.entries(row).map(([column, value]) => sql`${value}`.as(column))).where(unwatched))
              ).returning(codec.columns(resource))
            }))).rows[0]
            // With the turn's other creates where the dialect gathers them (gathered-writes.ts).
            const created = gathered !== undefined ? await gathered.create(resource, columns, rowValues, insertRow) : await insertRow()
            if (created === undefined) return NEEDS_TRANSACTION
            const inserted = codec.decode(resource, created)
            await outbox.add(resource, 'created', inserted)
            if (options?.idempotency !== undefined && !await markCreated(w, templated, options.idempotency, inserted)) {
              throw new IdempotencyInProgress('a retry with this Idempotency-Key took over after this request ran too long; nothing was created here')
            }
            return inserted
          }
        }, { inTransaction: options?.idempotency !== undefined, shareable: true })
      } catch (error) {
        return await errors.failedWrite(resource, values, error)
      }
    },

    async update (resource: Resource, id: number, edit: Edit, options?: WriteOptions): Promise<StoredRecord | WriteMiss> {
      let values: Readonly<Record<string, unknown>> = {}
      try {
        return await writes.run(onRecord(resource, id, options, async (w, outbox, current, row) => {
          values = edit(current)
          const fields = codec.encodeFields(resource, values)
          // Only changed columns are set: SQLite rewrites the index entries of every column a statement sets.
          const columns = Object.keys(fields).filter(column => fields[column] !== row[column])
          const { unwatched, gathered } = outbox
          // The changed columns' values, then the edit's time.
          const rowValues = [...columns.map(column => fields[column]), new Date().toISOString()]
          const updateRow = async (): Promise<Row | undefined> => (await w.executeQuery<Row>(compileMatching(resource, aloneOrNot(`update ${resource.collection} ${columns.join(' ')}`, unwatched), sameVersion(current, options), rowValues,
            (slots, where) => w.updateTable(resource.collection).set({ ...namedSlots(columns, slots), version: sql`version + 1`, updatedAt: slots[columns.length] })
              .where(where).$if(unwatched !== undefined, update => update.where(unwatched!)).returning(codec.columns(resource))))).rows[0]
          // By id only (an owner's narrowed view is not gathered), with the turn's other edits where the dialect gathers them.
          const edited = gathered !== undefined && (options?.where?.length ?? 0) === 0
            ? await gathered.edit(resource, current.id, current.version, columns, rowValues, updateRow)
            : await updateRow()
          if (edited === undefined) return nothingChanged(unwatched)
          const updated = codec.decode(resource, edited)
          await outbox.add(resource, 'updated', updated)
          return updated
        }), { shareable: true })
      } catch (error) {
        return await errors.failedWrite(resource, values, error)
      }
    },

    async remove (resource: Resource, id: number, check: (current: StoredRecord) => void, options?: WriteOptions): Promise<'removed' | WriteMiss> {
      try {
        return await writes.run(onRecord(resource, id, options, async (w, outbox, current) => {
          check(current)
          const cascaded = cascades(resource) && await outbox.wanted() ? await cascadedDeletes(w, resource, current.id) : new Map<string, number[]>()
          const { unwatched, gathered } = outbox
          const removeRow = async (): Promise<Row | undefined> => {
            const result = await w.executeQuery(compileMatching(resource, aloneOrNot(`remove ${resource.collection}`, unwatched), sameVersion(current, options), [],
              (_, where) => w.deleteFrom(resource.collection).where(where).$if(unwatched !== undefined, remove => remove.where(unwatched!))))
            return (result.numAffectedRows ?? 0n) === 0n ? undefined : { id: current.id }
          }
          // By id only, with the turn's other deletes where the dialect gathers them: alone, or in a shared transaction (neither has cascaded events).
          const removed = gathered !== undefined && (options?.where?.length ?? 0) === 0
            ? await gathered.remove(resource, current.id, current.version, removeRow)
            : await removeRow()
          if (removed === undefined) return nothingChanged(unwatched)
          await outbox.add(resource, 'deleted', { id: current.id })
          for (const [collection, ids] of cascaded) await outbox.addAll(collection, 'deleted', ids.map(id => ({ id })))
          return 'removed'
        }), { shareable: !cascades(resource) })
      } catch (error) {
        return await errors.failedRemove(resource, id, error)
      }
    }
  }
}
