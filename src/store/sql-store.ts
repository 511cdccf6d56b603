/**
 * The Store on top of Kysely, shared by every dialect. Every table and column
 * name comes from the definitions (checked against the model before use) and
 * every value is a bound parameter.
 */
import { randomBytes } from 'node:crypto'
import { sql, type Compilable, type Kysely, type CompiledQuery } from 'kysely'
import type { Model, Resource } from '../resources/model.js'
import { turnMemo } from '../turn-memo.js'
import { cachingApiKeys } from './api-key-cache.js'
import { conditionSql, type Where } from './conditions.js'
import { counting } from './counting.js'
import { credentialStore } from './credentials.js'
import type { Database, Dialect } from './dialect.js'
import { idempotencyStore, type WriteRunner } from './idempotency.js'
import { idempotencyBatches } from './idempotency-batches.js'
import { idBatches } from './id-batches.js'
import { indexChoice, type IndexChoice } from './index-choice.js'
import { listQuery } from './list-query.js'
import { byId, matchingQueries } from './matching-queries.js'
import { queryTemplates } from './query-templates.js'
import { reads } from './reads.js'
import { recordWrites } from './record-writes.js'
import { rowCodec, type Row } from './row-codec.js'
import { snapshotMemo } from './snapshot-memo.js'
import { migrateSchema } from './schema-migration.js'
import { stampedCache } from './stamped-cache.js'
import type { CountedPage, ListQuery, MigrationReport, Store, StoredRecord, WriteOptions } from './store.js'
import { storeErrors } from './store-errors.js'
import { SECRETS_TABLE, tableSpec } from './tables.js'
import { turnShared } from './turn-shared.js'
import { webhookStore } from './webhooks.js'

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
  const pagesOfTheTurn = turnShared<StoredRecord[]>()
  const specs = new Map(model.resources.map(resource => [resource.collection, tableSpec(model, resource, dialect)]))
  const codec = rowCodec(dialect, specs)
  const clauses = conditionSql(dialect, codec)
  const pageQuery = listQuery(db, codec, clauses, templated, dialect.inOneSnapshot !== undefined)
  const errors = storeErrors(dialect, model)
  const { rethrow, missingParents } = errors
  const readers = reads(dialect, rethrow)
  const { read, readInTurn, remembered } = readers
  const { count, matchesUpTo } = counting({ db, model, specs, codec, clauses, reads: readers, rethrow })
  const compileMatching = matchingQueries(codec, clauses, templated)

  /**
   * The shape of a read by id only, the hottest query, made once per
   * collection: compileMatching joins a shape's key for every query, and the
   * Map holding the templates then hashes that new string; a store.get cost
   * 2.42 µs with them and 2.06 µs without (50 reads a turn, in turns).
   */
  const byIdShapes = new Map(model.resources.map(resource => [resource.collection, `get ${resource.collection} by id`]))

  /** Whether a read is by id only: no narrowed view (an owner's) adds to its condition. */
  const byIdOnly = (options?: WriteOptions): boolean => options?.where === undefined || options.where.length === 0

  /** Records read at once where the dialect can (SQLite), each once per read snapshot. */
  const { currentSnapshot, readAtOnce } = dialect
  const recordsOfTheSnapshot = currentSnapshot === undefined || readAtOnce === undefined ? undefined : snapshotMemo<StoredRecord | undefined>(currentSnapshot)
  /** What a read by id is known by in the memo: the caller's narrowed view (an owner's) is part of it. */
  const recordKey = (resource: Resource, id: number, options?: WriteOptions): string =>
    byIdOnly(options) ? `${resource.collection} ${id}` : `${resource.collection} ${id} ${JSON.stringify(options!.where)}`

  /** Reads by id only, gathered per turn where the dialect binds an array (id-batches.ts): rows by id. */
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
    return async (executor, outside) => {
      if (outside && byIds !== undefined && byIdOnly(options)) return await byIds.load(resource, id)
      const { rows } = await executor.executeQuery<Row>(selectById(executor, resource, id, options))
      return rows[0]
    }
  }

  function selectById (executor: Kysely<Database>, resource: Resource, id: number, options?: WriteOptions): CompiledQuery {
    const select = (where: Where): Compilable => executor.selectFrom(resource.collection).select(codec.columns(resource)).where(where)
    if (byIdOnly(options)) {
      return templated(byIdShapes.get(resource.collection)!, [codec.encode(resource, 'id', id)], slots => select(eb => eb(eb.ref('id'), '=', slots[0])))
    }
    return compileMatching(resource, `get ${resource.collection}`, byId(id, options), [], (_, where) => select(where))
  }

  const decoded = (resource: Resource, row: Row | undefined): StoredRecord | undefined => row === undefined ? undefined : codec.decode(resource, row)
  /**
   * A turn's reads by id give every request that asked for a record the same
   * row (id-batches.ts): decoded once, they share one record, as they do on
   * SQLite (snapshot-memo.ts), and with it one answer (record-answers.ts).
   */
  const rowsDecoded = turnMemo<Row, StoredRecord>()
  const decodedOnce = (resource: Resource, row: Row | undefined): StoredRecord | undefined =>
    row === undefined ? undefined : rowsDecoded(row, () => codec.decode(resource, row))

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

  /** What a page is known by: every part of the query, the caller's narrowed view included. */
  const pageKey = (resource: Resource, query: ListQuery): string => `${resource.collection} ${JSON.stringify(query)}`

  /** A page asked for again while nothing changed (a collection's first page, polled) is given back without reading it. */
  async function rememberedPage (resource: Resource, query: ListQuery): Promise<StoredRecord[]> {
    if (query.limit > PAGE_ROWS_REMEMBERED) return await readPage(resource, query)
    return await remembered(pages, pageKey(resource, query), async () => await readPage(resource, query))
  }

  // Where one writer commits a turn's writes together (SQLite), the keys' claims and responses join them; elsewhere each commits by itself.
  const idempotencyWrites: WriteRunner = dialect.writesOneAtATime ? async job => await writer.run(job) : async job => await job(writer.db)

  return {
    dialect: dialect.name,
    credentials: guarded(cachingApiKeys(credentialStore(writer.db), apiKeyCacheMs)),
    idempotency: guarded(idempotencyStore(writer.db, idempotencyWrites, templated, idempotencyBatches(dialect, templated))),
    webhooks: guarded(webhookStore(writer)),
    ...recordWrites({ dialect, model, codec, templated, compileMatching, errors, rowForWrite }),
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
      if (dialect.localChangeStamp) return await rememberedPage(resource, query)
      // Without a stamp to read locally, the requests of one turn that want the same page read it once (turn-shared.ts).
      return await pagesOfTheTurn.load(pageKey(resource, query), async () => await readPage(resource, query))
    },

    count,

    async countedPage (resource: Resource, query: ListQuery): Promise<CountedPage> {
      // Started in one turn, the two share one read of the change stamp (oncePerTurn).
      const [records, total] = await Promise.all([rememberedPage(resource, query), count(resource, query.where)])
      return { records, total }
    },

    async get (resource: Resource, id: number, options?: WriteOptions): Promise<StoredRecord | undefined> {
      if (recordsOfTheSnapshot !== undefined) {
        try {
          return recordsOfTheSnapshot(recordKey(resource, id, options), () => decoded(resource, readAtOnce!<Row>(selectById(db, resource, id, options))[0]))
        } catch (error) {
          return rethrow(error)
        }
      }
      // Each request its own error: a 503 made from the batch's failure is answered by every request that waited.
      if (byIds !== undefined && byIdOnly(options)) return decodedOnce(resource, await byIds.load(resource, id).catch(rethrow))
      return decoded(resource, (await read<Row>(selectById(db, resource, id, options)))[0])
    }
  }
}
