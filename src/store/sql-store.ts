/**
 * The Store on top of Kysely, shared by every dialect. Every table and column
 * name comes from the definitions (checked against the model before use) and
 * every value is a bound parameter.
 */
import { randomBytes } from 'node:crypto'
import { sql, type Compilable, type Kysely, type CompiledQuery } from 'kysely'
import { IdempotencyInProgress } from '../errors.js'
import type { Condition } from '../resources/define.js'
import type { Model, Resource } from '../resources/model.js'
import { cachingApiKeys } from './api-key-cache.js'
import { cascadedIds, cascades } from './cascade.js'
import { conditionSql, type Where } from './conditions.js'
import { counting } from './counting.js'
import { credentialStore } from './credentials.js'
import type { Database, Dialect } from './dialect.js'
import { eventWrites, NEEDS_TRANSACTION } from './event-writes.js'
import { idempotencyStore, markCreated } from './idempotency.js'
import { idBatches } from './id-batches.js'
import { indexChoice, type IndexChoice } from './index-choice.js'
import { listQuery } from './list-query.js'
import { queryTemplates } from './query-templates.js'
import { reads } from './reads.js'
import { rowCodec, type Row } from './row-codec.js'
import { migrateSchema } from './schema-migration.js'
import { stampedCache } from './stamped-cache.js'
import type { CountedPage, Edit, InsertOptions, ListQuery, MigrationReport, Store, StoredRecord, WriteMiss, WriteOptions } from './store.js'
import { storeErrors } from './store-errors.js'
import { SECRETS_TABLE, tableSpec } from './tables.js'
import { webhookStore } from './webhooks.js'

/** `{ column: value }` for columns and the values at the same positions. */
function namedSlots (columns: readonly string[], values: readonly unknown[]): Row {
  const row: Row = {}
  columns.forEach((column, i) => { row[column] = values[i] })
  return row
}

/**
 * Pages remembered with the change stamp (where reading it is local, or where
 * a count read with the page reads it anyway), and how many rows a page may
 * have to be remembered (100 records, and the one more a cursor page reads to
 * know whether another follows): at most about 10,000 records are held.
 */
const PAGES_REMEMBERED = 100
const PAGE_ROWS_REMEMBERED = 101

export interface SqlStoreOptions {
  /** How long a looked-up API key is reused; 0: never. */
  readonly apiKeyCacheMs: number
}

export function createSqlStore (dialect: Dialect, model: Model, { apiKeyCacheMs }: SqlStoreOptions): Store {
  const { db, writer } = dialect
  const templated = queryTemplates()
  const pages = stampedCache<StoredRecord[]>(PAGES_REMEMBERED)
  const specs = new Map(model.resources.map(resource => [resource.collection, tableSpec(model, resource, dialect)]))
  const codec = rowCodec(dialect, specs)
  const clauses = conditionSql(dialect, codec)
  const { matching } = clauses
  const pageQuery = listQuery(db, codec, clauses, templated, dialect.inOneSnapshot !== undefined)
  const { rethrow, failedWrite, failedRemove, missingParents } = storeErrors(dialect, model)
  const readers = reads(dialect, rethrow)
  const { read, readInTurn, remembered } = readers
  const { count, matchesUpTo } = counting({ db, model, specs, codec, clauses, reads: readers, rethrow })
  // Where writes interleave, each is a transaction of its own anyway: its read need not be in it, and a write of one statement may commit alone.
  const writes = eventWrites(writer, templated, dialect.writesOneAtATime ? undefined : db)

  /**
   * A query on the rows matching `conditions`, compiled once per shape when
   * they are all equalities (by id, version, owner: every hot read and write),
   * else built afresh. `build` gets the leading values (or stand-ins for
   * them) and the where clause.
   */
  function compileMatching (
    resource: Resource, shape: string, conditions: readonly Condition[], leading: readonly unknown[],
    build: (values: readonly unknown[], where: Where) => Compilable
  ): CompiledQuery {
    if (!conditions.every(item => item.op === 'eq')) return build(leading, matching(resource, conditions)).compile()
    const values = [...leading, ...conditions.map(item => codec.encode(resource, item.field, item.value))]
    return templated(`${shape} where ${conditions.map(item => item.field).join(' ')}`, values,
      slots => build(slots, eb => eb.and(conditions.map((item, i) => eb(eb.ref(item.field), '=', slots[leading.length + i])))))
  }

  /**
   * What deleting `id` will take with it. Where writes can interleave, the
   * record is locked first: a child added concurrently would otherwise be
   * cascaded without being seen here, so without an event.
   */
  async function cascadedDeletes (w: Kysely<Database>, resource: Resource, id: number): Promise<Map<string, number[]>> {
    if (!dialect.writesOneAtATime) await w.selectFrom(resource.collection).select('id').where('id', '=', id).forUpdate().execute()
    return await cascadedIds(w, model, resource, id)
  }

  const byId = (id: number, options?: WriteOptions): Condition[] => [{ field: 'id', op: 'eq', value: id }, ...(options?.where ?? [])]
  const sameVersion = (current: StoredRecord, options?: WriteOptions): Condition[] => [...byId(current.id, options), { field: 'version', op: 'eq', value: current.version }]

  /**
   * The shape of a read by id alone, the hottest query, made once per
   * collection: compileMatching joins a shape's key for every query, and the
   * Map holding the templates then hashes that new string; a store.get cost
   * 2.42 µs with them and 2.06 µs without (50 reads a turn, in turns).
   */
  const byIdShapes = new Map(model.resources.map(resource => [resource.collection, `get ${resource.collection} by id`]))

  /** Whether a read is by id alone: no narrowed view (an owner's) adds to its condition. */
  const byIdAlone = (options?: WriteOptions): boolean => options?.where === undefined || options.where.length === 0

  /** Reads by id alone, gathered per turn where the dialect binds an array (id-batches.ts): rows by id. */
  const { anyOf } = dialect
  const byIds = anyOf === undefined
    ? undefined
    : idBatches<Resource, Row>(async (resource, ids) => {
      const query = templated(`get ${resource.collection} by ids`, [ids.map(id => codec.encode(resource, 'id', id))],
        slots => db.selectFrom(resource.collection).select(codec.columns(resource)).where(eb => anyOf(eb.ref('id'), slots[0])))
      const { rows } = await db.executeQuery<Row>(query)
      return new Map(rows.map(row => [Number(row.id), row]))
    })

  /**
   * The row a write starts from (event-writes.ts): on SQLite in the write's
   * transaction; `outside` any, with the turn's other reads by id, whose
   * write's condition on the version catches a row changed since.
   */
  function rowForWrite (resource: Resource, id: number, options?: WriteOptions): (executor: Kysely<Database>, outside: boolean) => Promise<Row | undefined> {
    return async (executor: Kysely<Database>, outside: boolean): Promise<Row | undefined> => {
      if (outside && byIds !== undefined && byIdAlone(options)) return await byIds.load(resource, id)
      const { rows } = await executor.executeQuery<Row>(selectById(executor, resource, id, options))
      return rows[0]
    }
  }

  function selectById (executor: Kysely<Database>, resource: Resource, id: number, options?: WriteOptions): CompiledQuery {
    const select = (where: Where): Compilable => executor.selectFrom(resource.collection).select(codec.columns(resource)).where(where)
    if (options?.where === undefined || options.where.length === 0) {
      return templated(byIdShapes.get(resource.collection)!, [codec.encode(resource, 'id', id)], slots => select(eb => eb(eb.ref('id'), '=', slots[0])))
    }
    return compileMatching(resource, `get ${resource.collection}`, byId(id, options), [], (_, where) => select(where))
  }

  const isPlainObject = (value: unknown): value is object => typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
  /** Every method of a sub-store (and of the objects it holds: credentials.apiKeys), with connectivity failures turned into 503s like the rest. */
  function guarded<T extends object> (target: T): T {
    const wrapped: Record<string, unknown> = {}
    for (const [name, member] of Object.entries(target)) {
      wrapped[name] = typeof member === 'function'
        ? async (...args: unknown[]) => await (member as (...args: unknown[]) => Promise<unknown>).apply(wrapped, args).catch(rethrow)
        : isPlainObject(member) ? guarded(member) : member
    }
    return wrapped as T
  }

  const unindexedColumns: IndexChoice = dialect.unindexed === undefined
    ? async () => undefined
    : indexChoice({ rows: async resource => await count(resource, []), matchesUpTo })

  async function readPage (resource: Resource, query: ListQuery): Promise<StoredRecord[]> {
    const queries = pageQuery(resource, query, await unindexedColumns(resource, query))
    const rows = queries.length === 1 ? await read<Row>(queries[0]!) : readInTurn<Row>(queries, query.limit)
    return rows.map(row => codec.decode(resource, row))
  }

  /** A page asked for again while nothing changed (a collection's first page, polled) is given back without reading it. */
  async function rememberedPage (resource: Resource, query: ListQuery): Promise<StoredRecord[]> {
    if (query.limit > PAGE_ROWS_REMEMBERED) return await readPage(resource, query)
    return await remembered(pages, `${resource.collection} ${JSON.stringify(query)}`, async () => await readPage(resource, query))
  }

  return {
    dialect: dialect.name,
    credentials: guarded(cachingApiKeys(credentialStore(writer.db), apiKeyCacheMs)),
    idempotency: guarded(idempotencyStore(writer.db)),
    webhooks: guarded(webhookStore(writer)),
    onEventsEnqueued: writes.onEnqueued,
    missingParents,

    async migrate (): Promise<MigrationReport> {
      return await migrateSchema(writer.db, dialect, [...specs.values()])
    },

    async ping (): Promise<void> {
      await sql`select 1`.execute(db)
    },

    async close (): Promise<void> {
      await db.destroy()
      if (writer.db !== db) await writer.db.destroy()
    },

    async secret (name: string): Promise<Buffer> {
      const read = async () => await db.selectFrom(SECRETS_TABLE).select('value').where('name', '=', name).executeTakeFirst()
      let row = await read()
      if (row === undefined) {
        // Concurrent first uses race here; whichever insert wins, every process reads the same value.
        await writer.db.insertInto(SECRETS_TABLE).values({ name, value: randomBytes(32).toString('base64') })
          .onConflict(conflict => conflict.column('name').doNothing()).execute()
        row = await read()
      }
      return Buffer.from(String(row!.value), 'base64')
    },

    async list (resource: Resource, query: ListQuery): Promise<StoredRecord[]> {
      return dialect.localChangeStamp ? await rememberedPage(resource, query) : await readPage(resource, query)
    },

    count,

    async countedPage (resource: Resource, query: ListQuery): Promise<CountedPage> {
      // Started in one turn, the two share one read of the change stamp (oncePerTurn).
      const [records, total] = await Promise.all([rememberedPage(resource, query), count(resource, query.where)])
      return { records, total }
    },

    async get (resource: Resource, id: number, options?: WriteOptions): Promise<StoredRecord | undefined> {
      // Each request its own error: a 503 made from the batch's failure is answered by every request that waited.
      const row = byIds !== undefined && byIdAlone(options)
        ? await byIds.load(resource, id).catch(rethrow)
        : (await read<Row>(selectById(db, resource, id, options)))[0]
      return row === undefined ? undefined : codec.decode(resource, row)
    },

    async insert (resource: Resource, values: Readonly<Record<string, unknown>>, options?: InsertOptions): Promise<StoredRecord> {
      const fields = codec.encodeFields(resource, values)
      const columns = Object.keys(fields)
      const now = new Date().toISOString()
      try {
        return await writes.run({
          read: async () => undefined,
          write: async (w, outbox) => {
            const { unwatched } = outbox
            const { rows } = await w.executeQuery<Row>(compileMatching(resource, `insert ${resource.collection} ${columns.join(' ')}${unwatched === undefined ? '' : ' alone'}`, [], [...Object.values(fields), now], slots => {
              const row = { ...namedSlots(columns, slots), version: 1, createdAt: slots[columns.length], updatedAt: slots[columns.length] }
              const insert = w.insertInto(resource.collection)
              // Alone, the row's values are selected under the condition (PostgreSQL types each by its column).
              return (unwatched === undefined
                ? insert.values(row)
                : insert.columns(Object.keys(row)).expression(w.selectNoFrom(Object.entries(row).map(([column, value]) => sql`${value}`.as(column))).where(unwatched))
              ).returning(codec.columns(resource))
            }))
            if (rows[0] === undefined) return NEEDS_TRANSACTION
            const inserted = codec.decode(resource, rows[0])
            await outbox.add(resource, 'created', inserted)
            if (options?.idempotency !== undefined && !await markCreated(w, options.idempotency, inserted)) {
              throw new IdempotencyInProgress('a retry with this Idempotency-Key took over after this request ran too long; nothing was created here')
            }
            return inserted
          }
        }, { inTransaction: options?.idempotency !== undefined })
      } catch (error) {
        return await failedWrite(resource, values, error)
      }
    },

    async update (resource: Resource, id: number, edit: Edit, options?: WriteOptions): Promise<StoredRecord | WriteMiss> {
      let values: Readonly<Record<string, unknown>> = {}
      try {
        return await writes.run({
          read: rowForWrite(resource, id, options),
          write: async (w, outbox, row) => {
            if (row === undefined) return 'missing'
            const current = codec.decode(resource, row)
            values = edit(current)
            const fields = codec.encodeFields(resource, values)
            // Only changed columns are set: SQLite rewrites the index entries of every column a statement sets.
            const columns = Object.keys(fields).filter(column => fields[column] !== row[column])
            const { unwatched } = outbox
            const { rows } = await w.executeQuery<Row>(compileMatching(resource, `update ${resource.collection} ${columns.join(' ')}${unwatched === undefined ? '' : ' alone'}`, sameVersion(current, options), [...columns.map(column => fields[column]), new Date().toISOString()],
              (slots, where) => w.updateTable(resource.collection).set({ ...namedSlots(columns, slots), version: sql`version + 1`, updatedAt: slots[columns.length] })
                .where(where).$if(unwatched !== undefined, update => update.where(unwatched!)).returning(codec.columns(resource))))
            if (rows[0] === undefined) return unwatched === undefined ? 'raced' : NEEDS_TRANSACTION
            const updated = codec.decode(resource, rows[0])
            await outbox.add(resource, 'updated', updated)
            return updated
          }
        })
      } catch (error) {
        return await failedWrite(resource, values, error)
      }
    },

    async remove (resource: Resource, id: number, check: (current: StoredRecord) => void, options?: WriteOptions): Promise<'removed' | WriteMiss> {
      try {
        return await writes.run({
          read: rowForWrite(resource, id, options),
          write: async (w, outbox, row) => {
            if (row === undefined) return 'missing'
            const current = codec.decode(resource, row)
            check(current)
            const cascaded = cascades(resource) && await outbox.wanted() ? await cascadedDeletes(w, resource, current.id) : new Map<string, number[]>()
            const { unwatched } = outbox
            const result = await w.executeQuery(compileMatching(resource, `remove ${resource.collection}${unwatched === undefined ? '' : ' alone'}`, sameVersion(current, options), [],
              (_, where) => w.deleteFrom(resource.collection).where(where).$if(unwatched !== undefined, remove => remove.where(unwatched!))))
            if ((result.numAffectedRows ?? 0n) === 0n) return unwatched === undefined ? 'raced' : NEEDS_TRANSACTION
            await outbox.add(resource, 'deleted', { id: current.id })
            for (const [collection, ids] of cascaded) await outbox.addAll(collection, 'deleted', ids.map(id => ({ id })))
            return 'removed'
          }
        })
      } catch (error) {
        return await failedRemove(resource, id, error)
      }
    }
  }
}
