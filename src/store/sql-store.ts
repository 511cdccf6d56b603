/**
 * The Store on top of Kysely, shared by every dialect. Every table and column
 * name comes from the definitions (checked against the model before use) and
 * every value is a bound parameter.
 */
import { randomBytes } from 'node:crypto'
import { sql, type Compilable, type Kysely, type CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool, type Transaction } from 'kysely'
import { IdempotencyInProgress, invalid, StillReferenced, StoreUnavailable, UniqueViolation } from '../errors.js'
import type { Condition } from '../resources/define.js'
import type { Model, Resource } from '../resources/model.js'
import { cachingApiKeys } from './api-key-cache.js'
import { cascadedIds, cascades } from './cascade.js'
import { createCredentialTables, credentialStore } from './credentials.js'
import type { Database, Dialect } from './dialect.js'
import { createIdempotencyTable, idempotencyStore, markCreated } from './idempotency.js'
import { queryTemplates } from './query-templates.js'
import { addEvents, anySubscription, createWebhookTables, eventValues, outboxInsert, webhookStore, type EventKind } from './webhooks.js'
import { stampedCache } from './stamped-cache.js'
import { MigrationRefused, type Edit, type InsertOptions, type ListQuery, type MigrationReport, type SortKey, type Store, type StoredRecord, type WriteMiss, type WriteOptions } from './store.js'
import { MIGRATIONS_TABLE, SECRETS_TABLE, planMigration, tableSpec, type ColumnKind, type ColumnSpec, type TableSpec } from './tables.js'

type Row = Record<string, unknown>
type Builder = ExpressionBuilder<Database, string>

// `ne` keeps rows without a value: "assignee is not bob" includes tasks nobody is assigned to.
const COMPARISONS = { eq: '=', ne: 'is distinct from', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const

/** `{ column: value }` for columns and the values at the same positions. */
function namedSlots (columns: readonly string[], values: readonly unknown[]): Row {
  const row: Row = {}
  columns.forEach((column, i) => { row[column] = values[i] })
  return row
}

/** `*` is the only wildcard; `%`, `_` and the escape character itself match literally. */
export function likePattern (value: string): string {
  return value.replace(/[\\%_]/g, match => `\\${match}`).replace(/\*/g, '%')
}

export interface SqlStoreOptions {
  /** How long a looked-up API key is reused; 0: never. */
  readonly apiKeyCacheMs: number
}

export function createSqlStore (dialect: Dialect, model: Model, { apiKeyCacheMs }: SqlStoreOptions): Store {
  const { db, writer } = dialect
  const webhooks = webhookStore(writer)
  const enqueuedListeners: Array<() => void> = []
  const templated = queryTemplates()
  const counts = stampedCache<number>()
  const specs = new Map(model.resources.map(resource => [resource.collection, tableSpec(model, resource, dialect)]))
  const kinds = new Map([...specs].map(([table, spec]) => [table, new Map(spec.columns.map(column => [column.name, column.kind]))]))
  const nullable = new Map([...specs].map(([table, spec]) => [table, new Set(spec.columns.filter(column => !column.notNull).map(column => column.name))]))

  function columnKind (resource: Resource, column: string): ColumnKind {
    const kind = kinds.get(resource.collection)?.get(column)
    // Only names from the definitions get here; anything else is a bug, never SQL.
    if (kind === undefined) throw new Error(`${resource.collection} has no column ${column}`)
    return kind
  }

  function decode (resource: Resource, row: Row): StoredRecord {
    const values: Record<string, unknown> = {}
    for (const field of resource.fields.keys()) {
      const value = dialect.decode(columnKind(resource, field), row[field])
      if (value !== undefined) values[field] = value
    }
    if (resource.owner !== undefined && row[resource.owner] !== null && row[resource.owner] !== undefined) {
      values[resource.owner] = row[resource.owner]
    }
    return {
      id: Number(row.id),
      version: Number(row.version),
      createdAt: dialect.decode('timestamp', row.createdAt) as string,
      updatedAt: dialect.decode('timestamp', row.updatedAt) as string,
      values
    }
  }

  function encodeFields (resource: Resource, values: Readonly<Record<string, unknown>>): Row {
    const row: Row = {}
    for (const field of resource.fields.keys()) row[field] = dialect.encode(columnKind(resource, field), values[field])
    if (resource.owner !== undefined && values[resource.owner] !== undefined) row[resource.owner] = values[resource.owner]
    return row
  }

  function condition (resource: Resource, eb: Builder, { field, op, value }: Condition): Expression<SqlBool> {
    const kind = columnKind(resource, field)
    const column = eb.ref(field)
    if (op === 'in') {
      const list = (value as unknown[]).map(item => dialect.encode(kind, item))
      return eb(column, 'in', list)
    }
    if (op === 'like') return dialect.like(column, likePattern(String(value)))
    return eb(column, COMPARISONS[op], dialect.encode(kind, value))
  }

  function matching (resource: Resource, conditions: readonly Condition[]) {
    return (eb: Builder) => eb.and(conditions.map(item => condition(resource, eb, item)))
  }

  /**
   * A query on the rows matching `conditions`, compiled once per shape when
   * they are all equalities (by id, version, owner: every hot read and write),
   * else built afresh. `build` gets the leading values (or stand-ins for
   * them) and the where clause.
   */
  function compileMatching (
    resource: Resource, shape: string, conditions: readonly Condition[], leading: readonly unknown[],
    build: (values: readonly unknown[], where: (eb: Builder) => Expression<SqlBool>) => Compilable
  ): CompiledQuery {
    if (!conditions.every(item => item.op === 'eq')) return build(leading, matching(resource, conditions)).compile()
    const values = [...leading, ...conditions.map(item => dialect.encode(columnKind(resource, item.field), item.value))]
    return templated(`${shape} where ${conditions.map(item => item.field).join(' ')}`, values,
      slots => build(slots, eb => eb.and(conditions.map((item, i) => eb(eb.ref(item.field), '=', slots[leading.length + i])))))
  }

  interface Outbox {
    /** Adds the event of one write, if some subscription is active (one statement either way). */
    add: (resource: Resource, kind: EventKind, record: unknown) => Promise<void>
    /** Adds the events of many records of one collection, once `anySubscription` said they are wanted. */
    addAll: (collection: string, kind: EventKind, records: readonly unknown[]) => Promise<void>
  }

  /**
   * Runs a store write on the writer. Its events go to the outbox inside the
   * same transaction; once that has committed, the dispatcher is told if some
   * subscription may want them.
   */
  async function writeWithEvents<T> (job: (w: Kysely<Database>, outbox: Outbox) => Promise<T>): Promise<T> {
    let enqueued = false
    const result = await writer.run(async w => await job(w, {
      async add (resource, kind, record) {
        const inserted = await w.executeQuery(templated('webhook event', eventValues(resource.collection, kind, record), slots => outboxInsert(w, slots)))
        enqueued = enqueued || (inserted.numAffectedRows ?? 0n) > 0n
      },
      async addAll (collection, kind, records) {
        await addEvents(w, collection, kind, records)
        enqueued = enqueued || records.length > 0
      }
    }))
    if (enqueued) for (const listener of enqueuedListeners) listener()
    return result
  }

  /**
   * What deleting `id` will take with it. Elsewhere than SQLite (one writer at
   * a time) the record is locked first: a child added concurrently would
   * otherwise be cascaded without being seen here, so without an event.
   */
  async function cascadedDeletes (w: Kysely<Database>, resource: Resource, id: number): Promise<Map<string, number[]>> {
    if (dialect.name !== 'sqlite') await w.selectFrom(resource.collection).select('id').where('id', '=', id).forUpdate().execute()
    return await cascadedIds(w, model, resource, id)
  }

  const byId = (id: number, options?: WriteOptions): Condition[] => [{ field: 'id', op: 'eq', value: id }, ...(options?.where ?? [])]
  const sameVersion = (current: StoredRecord, options?: WriteOptions): Condition[] => [...byId(current.id, options), { field: 'version', op: 'eq', value: current.version }]

  /** The row as a write job sees it: on SQLite inside the write transaction, so nothing can change it before the write. */
  async function readForWrite (w: Kysely<Database>, resource: Resource, id: number, options?: WriteOptions): Promise<Row | undefined> {
    const { rows } = await w.executeQuery<Row>(selectById(w, resource, id, options))
    return rows[0]
  }

  function selectById (executor: Kysely<Database>, resource: Resource, id: number, options?: WriteOptions): CompiledQuery {
    return compileMatching(resource, `get ${resource.collection}`, byId(id, options), [], (_, where) => executor.selectFrom(resource.collection).selectAll().where(where))
  }

  /**
   * Rows strictly after a keyset position, under an order where missing values
   * sort last in either direction: (k1 beyond v1) OR (k1 = v1 AND k2 beyond v2) …
   * The values are already encoded (or stand-ins for them); which are missing
   * decides the shape of the condition.
   */
  function after (resource: Resource, orderBy: readonly SortKey[], values: readonly unknown[]) {
    return (eb: Builder): Expression<SqlBool> => {
      const branches: Array<Expression<SqlBool>> = []
      for (let i = 0; i < orderBy.length; i++) {
        const { field, direction } = orderBy[i]!
        const value = values[i]
        // Nothing sorts after a missing value but other missing values, which the next key orders.
        if (value === null || value === undefined) continue
        const ahead = eb(eb.ref(field), direction === 'asc' ? '>' : '<', value)
        const beyond = nullable.get(resource.collection)?.has(field) === true ? eb.or([ahead, eb(eb.ref(field), 'is', null)]) : ahead
        const equalBefore = orderBy.slice(0, i).map(({ field: previous }, j) => {
          const earlier = values[j]
          return earlier === null || earlier === undefined
            ? eb(eb.ref(previous), 'is', null)
            : eb(eb.ref(previous), '=', earlier)
        })
        branches.push(eb.and([...equalBefore, beyond]))
      }
      return branches.length === 0 ? sql<SqlBool>`1 = 0` : eb.or(branches)
    }
  }

  function rethrow (error: unknown): never {
    if (dialect.classify(error)?.kind === 'unavailable') throw new StoreUnavailable('the database is unavailable; try again shortly')
    throw error
  }

  /** Finds which foreign keys of a write point at rows that do not exist. */
  async function missingParents (resource: Resource, values: Readonly<Record<string, unknown>>): Promise<never> {
    const issues = []
    for (const link of resource.parents) {
      const id = values[link.foreignKey]
      if (id === undefined || id === null) continue
      const parent = await db.selectFrom(link.parent).select('id').where('id', '=', id as number).executeTakeFirst()
      if (parent === undefined) {
        issues.push({ in: 'body' as const, pointer: `/${link.foreignKey}`, detail: `refers to ${model.get(link.parent).singular} ${String(id)}, which does not exist` })
      }
    }
    if (issues.length === 0) throw new Error(`foreign key violation on ${resource.collection} with no missing parent`)
    throw invalid(issues)
  }

  async function translateWrite (resource: Resource, values: Readonly<Record<string, unknown>>, error: unknown): Promise<never> {
    const violation = dialect.classify(error)
    if (violation?.kind === 'unique') {
      const field = violation.column ?? resource.definition.unique.join(', ')
      throw new UniqueViolation(`another ${resource.singular} already has this ${field}`)
    }
    if (violation?.kind === 'foreign-key') return await missingParents(resource, values)
    return rethrow(error)
  }

  async function referencingChildren (resource: Resource, id: number): Promise<never> {
    const holders: string[] = []
    for (const link of resource.children) {
      if (link.onDelete === 'cascade') continue
      const row = await db.selectFrom(link.child).select(eb => eb.fn.countAll<number>().as('n')).where(link.foreignKey, '=', id).executeTakeFirst()
      if (Number(row?.n ?? 0) > 0) holders.push(`${String(row?.n)} ${link.child}`)
    }
    throw new StillReferenced(`this ${resource.singular} is still referenced by ${holders.join(' and ') || 'other records'}; delete or move them first`)
  }

  function columnDefinition (spec: ColumnSpec) {
    return (column: Parameters<Dialect['idColumn']>[0]) => {
      let built = spec.kind === 'id' ? dialect.idColumn(column) : column
      if (spec.notNull && spec.kind !== 'id') built = built.notNull()
      if (spec.default !== undefined) built = built.defaultTo(dialect.encode(spec.kind, spec.default))
      if (spec.references !== undefined) built = built.references(`${spec.references.table}.id`).onDelete(spec.references.onDelete)
      return built
    }
  }

  async function createTable (trx: Transaction<Database>, spec: TableSpec): Promise<string> {
    let builder = trx.schema.createTable(spec.name)
    for (const column of spec.columns) builder = builder.addColumn(column.name, dialect.columnType(column.kind), columnDefinition(column))
    await builder.execute()
    return `create table ${spec.name}`
  }

  /** Every method of a sub-store, with connectivity failures turned into 503s like the rest. */
  function guarded<T extends object> (target: T): T {
    const wrapped: Record<string, unknown> = {}
    for (const [name, method] of Object.entries(target)) {
      wrapped[name] = async (...args: unknown[]) => await (method as (...args: unknown[]) => Promise<unknown>).apply(wrapped, args).catch(rethrow)
    }
    return wrapped as T
  }

  return {
    dialect: dialect.name,
    credentials: guarded(cachingApiKeys(credentialStore(writer.db), apiKeyCacheMs)),
    idempotency: guarded(idempotencyStore(writer.db)),
    webhooks: guarded(webhooks),
    onEventsEnqueued (listener) { enqueuedListeners.push(listener) },

    async migrate (): Promise<MigrationReport> {
      return await writer.db.transaction().execute(async trx => {
        await dialect.lockMigrations(trx)
        await trx.schema.createTable(MIGRATIONS_TABLE).ifNotExists()
          .addColumn('id', dialect.columnType('id'), column => dialect.idColumn(column))
          .addColumn('appliedAt', dialect.columnType('timestamp'), column => column.notNull())
          .addColumn('change', 'text', column => column.notNull())
          .execute()
        await trx.schema.createTable(SECRETS_TABLE).ifNotExists()
          .addColumn('name', 'text', column => column.primaryKey())
          .addColumn('value', 'text', column => column.notNull())
          .execute()
        await createCredentialTables(trx, dialect)
        await createIdempotencyTable(trx, dialect)
        await createWebhookTables(trx, dialect)
        // Planned inside the transaction, after the lock, so a concurrent start sees the finished result.
        const plan = planMigration([...specs.values()], await dialect.columns(trx), dialect.sameType)
        if (plan.refusals.length > 0) throw new MigrationRefused(plan.refusals)
        const applied: string[] = []
        for (const spec of plan.createTables) applied.push(await createTable(trx, spec))
        for (const { table, column } of plan.addColumns) {
          await trx.schema.alterTable(table).addColumn(column.name, dialect.columnType(column.kind), columnDefinition(column)).execute()
          applied.push(`add column ${table}.${column.name}`)
        }
        const before = await dialect.indexNames(trx)
        for (const { table, index } of plan.indexes) {
          if (before.has(index.name)) continue
          const create = trx.schema.createIndex(index.name).ifNotExists().on(table)
          let builder = index.descending === true
            ? create.expression(sql.join(index.columns.map((column, i) => i === 0 ? sql`${sql.ref(column)} desc nulls last` : sql`${sql.ref(column)} desc`)))
            : create.columns([...index.columns])
          if (index.unique) builder = builder.unique()
          await builder.execute()
          applied.push(`create ${index.unique ? 'unique ' : ''}index ${index.name}`)
        }
        const appliedAt = new Date().toISOString()
        for (const change of applied) await trx.insertInto(MIGRATIONS_TABLE).values({ appliedAt, change }).execute()
        return { applied }
      })
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
      const { where, orderBy } = query
      const position = query.after?.map((value, i) => value === null || value === undefined ? null : dialect.encode(columnKind(resource, orderBy[i]!.field), value))
      const build = (conditions: (eb: Builder) => Expression<SqlBool>, keyset: readonly unknown[] | undefined, limit: unknown, offset: unknown): Compilable => {
        let select = db.selectFrom(resource.collection).selectAll()
        if (where.length > 0) select = select.where(conditions)
        if (keyset !== undefined) select = select.where(after(resource, orderBy, keyset))
        const nullableColumns = nullable.get(resource.collection)
        for (const key of orderBy) {
          columnKind(resource, key.field)
          // NULLS LAST only where a value can be missing: on a NOT NULL column it would keep PostgreSQL from reading a descending order off the index.
          select = nullableColumns?.has(key.field) === true
            ? select.orderBy(key.field, order => key.direction === 'asc' ? order.asc().nullsLast() : order.desc().nullsLast())
            : select.orderBy(key.field, key.direction)
        }
        return select.limit(limit as number).offset(offset as number)
      }
      // Comparisons (every named filter of the examples) compile once per shape; `in` and `like` are built each time.
      const compiled = where.every(item => item.op in COMPARISONS)
        ? templated(
          `list ${resource.collection} ${where.map(item => `${item.field} ${item.op}`).join(' ')} after ${position?.map(value => value === null ? 'null' : '?').join(' ') ?? '-'} by ${orderBy.map(key => `${key.field} ${key.direction}`).join(' ')}`,
          [...where.map(item => dialect.encode(columnKind(resource, item.field), item.value)), ...(position ?? []), query.limit, query.offset],
          slots => build(
            eb => eb.and(where.map((item, i) => eb(eb.ref(item.field), COMPARISONS[item.op as keyof typeof COMPARISONS], slots[i]))),
            position?.map((value, i) => value === null ? null : slots[where.length + i]),
            slots[slots.length - 2], slots[slots.length - 1]))
        : build(matching(resource, where), position, query.limit, query.offset).compile()
      const { rows } = await db.executeQuery<Row>(compiled).catch(rethrow)
      return rows.map(row => decode(resource, row))
    },

    async count (resource: Resource, where: readonly Condition[]): Promise<number> {
      // Read before counting: a write in between makes the stamp stale, never the count.
      const stamp = await Promise.resolve(dialect.changeStamp?.()).catch(rethrow)
      const key = `${resource.collection} ${JSON.stringify(where)}`
      const known = stamp === undefined ? undefined : counts.get(key, stamp)
      if (known !== undefined) return known
      let select = db.selectFrom(resource.collection).select(eb => eb.fn.countAll<number>().as('n'))
      if (where.length > 0) select = select.where(matching(resource, where))
      const row = await select.executeTakeFirst().catch(rethrow)
      const total = Number(row?.n ?? 0)
      if (stamp !== undefined) counts.set(key, stamp, total)
      return total
    },

    async get (resource: Resource, id: number, options?: WriteOptions): Promise<StoredRecord | undefined> {
      const { rows } = await db.executeQuery<Row>(selectById(db, resource, id, options)).catch(rethrow)
      return rows[0] === undefined ? undefined : decode(resource, rows[0])
    },

    async insert (resource: Resource, values: Readonly<Record<string, unknown>>, options?: InsertOptions): Promise<StoredRecord> {
      const fields = encodeFields(resource, values)
      const columns = Object.keys(fields)
      const now = new Date().toISOString()
      try {
        return await writeWithEvents(async (w, outbox) => {
          const { rows } = await w.executeQuery<Row>(compileMatching(resource, `insert ${resource.collection} ${columns.join(' ')}`, [], [...Object.values(fields), now],
            slots => w.insertInto(resource.collection).values({ ...namedSlots(columns, slots), version: 1, createdAt: slots[columns.length], updatedAt: slots[columns.length] }).returningAll()))
          const inserted = decode(resource, rows[0]!)
          await outbox.add(resource, 'created', inserted)
          if (options?.idempotency !== undefined && !await markCreated(w, options.idempotency, inserted)) {
            throw new IdempotencyInProgress('a retry with this Idempotency-Key took over after this request ran too long; nothing was created here')
          }
          return inserted
        })
      } catch (error) {
        return await translateWrite(resource, values, error)
      }
    },

    async update (resource: Resource, id: number, edit: Edit, options?: WriteOptions): Promise<StoredRecord | WriteMiss> {
      let values: Readonly<Record<string, unknown>> = {}
      try {
        return await writeWithEvents(async (w, outbox) => {
          const row = await readForWrite(w, resource, id, options)
          if (row === undefined) return 'missing'
          const current = decode(resource, row)
          values = edit(current)
          const fields = encodeFields(resource, values)
          // Only changed columns are set: SQLite rewrites the index entries of every column a statement sets.
          const columns = Object.keys(fields).filter(column => fields[column] !== row[column])
          const { rows } = await w.executeQuery<Row>(compileMatching(resource, `update ${resource.collection} ${columns.join(' ')}`, sameVersion(current, options), [...columns.map(column => fields[column]), new Date().toISOString()],
            (slots, where) => w.updateTable(resource.collection).set({ ...namedSlots(columns, slots), version: sql`version + 1`, updatedAt: slots[columns.length] }).where(where).returningAll()))
          if (rows[0] === undefined) return 'raced'
          const updated = decode(resource, rows[0])
          await outbox.add(resource, 'updated', updated)
          return updated
        })
      } catch (error) {
        return await translateWrite(resource, values, error)
      }
    },

    async remove (resource: Resource, id: number, check: (current: StoredRecord) => void, options?: WriteOptions): Promise<'removed' | WriteMiss> {
      try {
        return await writeWithEvents(async (w, outbox) => {
          const row = await readForWrite(w, resource, id, options)
          if (row === undefined) return 'missing'
          const current = decode(resource, row)
          check(current)
          const cascaded = cascades(resource) && await anySubscription(w) ? await cascadedDeletes(w, resource, current.id) : new Map<string, number[]>()
          const result = await w.executeQuery(compileMatching(resource, `remove ${resource.collection}`, sameVersion(current, options), [], (_, where) => w.deleteFrom(resource.collection).where(where)))
          if ((result.numAffectedRows ?? 0n) === 0n) return 'raced'
          await outbox.add(resource, 'deleted', { id: current.id })
          for (const [collection, ids] of cascaded) await outbox.addAll(collection, 'deleted', ids.map(id => ({ id })))
          return 'removed'
        })
      } catch (error) {
        if (dialect.classify(error)?.kind === 'foreign-key') return await referencingChildren(resource, id)
        return rethrow(error)
      }
    }
  }
}
