/**
 * Bringing a database in line with the definitions: the engine's own tables,
 * then the additive plan of tables.ts (new tables, columns and indexes), then
 * the row counts of collections that have none yet (row-counts.ts) and the
 * value counts of columns that have none yet (value-counts.ts), all in one
 * transaction under the dialect's migration lock, each change recorded.
 */
import { sql, type Kysely, type Transaction } from 'kysely'
import { createCredentialTables, repairFarExpiries } from './credentials.js'
import type { Database, Dialect } from './dialect.js'
import { createIdempotencyTable } from './idempotency.js'
import { countRows, createRowCountTable } from './row-counts.js'
import { countValues } from './value-counts.js'
import { MigrationRefused, type MigrationReport } from './store.js'
import { MIGRATIONS_TABLE, SECRETS_TABLE, indexName, planMigration, type ColumnSpec, type IndexSpec, type TableSpec } from './tables.js'
import { createWebhookTables } from './webhook-tables.js'

function columnDefinition (dialect: Dialect, spec: ColumnSpec) {
  return (column: Parameters<Dialect['idColumn']>[0]) => {
    let built = spec.kind === 'id' ? dialect.idColumn(column) : column
    if (spec.notNull && spec.kind !== 'id') built = built.notNull()
    if (spec.default !== undefined) built = built.defaultTo(dialect.encode(spec.kind, spec.default))
    if (spec.references !== undefined) built = built.references(`${spec.references.table}.id`).onDelete(spec.references.onDelete)
    return built
  }
}

async function createTable (trx: Transaction<Database>, dialect: Dialect, spec: TableSpec): Promise<string> {
  let builder = trx.schema.createTable(spec.name)
  for (const column of spec.columns) builder = builder.addColumn(column.name, dialect.columnType(column.kind), columnDefinition(dialect, column))
  await builder.execute()
  return `create table ${spec.name}`
}

async function createIndex (trx: Transaction<Database>, table: string, index: IndexSpec): Promise<string> {
  const create = trx.schema.createIndex(index.name).ifNotExists().on(table)
  let builder = index.descending === true
    ? create.expression(sql.join(index.columns.map((column, i) => i === 0 ? sql`${sql.ref(column)} desc nulls last` : sql`${sql.ref(column)} desc`)))
    : create.columns([...index.columns])
  if (index.unique) builder = builder.unique()
  await builder.execute()
  return `create ${index.unique ? 'unique ' : ''}index ${index.name}`
}

/** The tables every database has whatever the definitions: migrations, secrets, credentials, idempotency keys, webhooks, row counts. */
async function createEngineTables (trx: Transaction<Database>, dialect: Dialect): Promise<void> {
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
  await createRowCountTable(trx, dialect)
}

/**
 * A unique index the engine made that the definitions no longer declare,
 * such as a `unique` taken out, or one now kept per owner: left in place it
 * would go on refusing writes the definitions allow (409). Dropping it loses
 * no data. The engine's are those whose name is the one it gives an index on
 * their columns (shortened where PostgreSQL would cut it); indexes of any
 * other name are left alone, since they may be an operator's own.
 */
async function dropUndeclaredUniqueness (trx: Transaction<Database>, dialect: Dialect, specs: readonly TableSpec[], wanted: ReadonlySet<string>): Promise<string[]> {
  const tables = new Set(specs.map(spec => spec.name))
  const dropped: string[] = []
  for (const { name, table, columns } of await dialect.uniqueIndexes(trx)) {
    if (!tables.has(table) || wanted.has(name) || name !== indexName(table, columns, true, dialect)) continue
    await trx.schema.dropIndex(name).execute()
    dropped.push(`drop unique index ${name} (no longer declared)`)
  }
  return dropped
}

export async function migrateSchema (db: Kysely<Database>, dialect: Dialect, specs: readonly TableSpec[]): Promise<MigrationReport> {
  return await db.transaction().execute(async trx => {
    await dialect.lockMigrations(trx)
    await createEngineTables(trx, dialect)
    // Planned inside the transaction, after the lock, so a concurrent start sees the finished result.
    const plan = planMigration(specs, await dialect.columns(trx), dialect.sameType)
    if (plan.refusals.length > 0) throw new MigrationRefused(plan.refusals)
    const applied: string[] = []
    for (const spec of plan.createTables) applied.push(await createTable(trx, dialect, spec))
    for (const { table, column } of plan.addColumns) {
      await trx.schema.alterTable(table).addColumn(column.name, dialect.columnType(column.kind), columnDefinition(dialect, column)).execute()
      applied.push(`add column ${table}.${column.name}`)
    }
    const before = await dialect.indexNames(trx)
    for (const { table, index } of plan.indexes) if (!before.has(index.name)) applied.push(await createIndex(trx, table, index))
    applied.push(...await dropUndeclaredUniqueness(trx, dialect, specs, new Set(plan.indexes.map(({ index }) => index.name))))
    applied.push(...await repairFarExpiries(trx, dialect))
    applied.push(...await countRows(trx, dialect, specs.map(spec => spec.name)))
    applied.push(...await countValues(trx, dialect, specs))
    applied.push(...await dialect.renewTallies?.(trx, specs.map(spec => spec.name), specs.flatMap(spec => spec.tallied.map(column => [spec.name, column] as const))) ?? [])
    const appliedAt = new Date().toISOString()
    for (const change of applied) await trx.insertInto(MIGRATIONS_TABLE).values({ appliedAt, change }).execute()
    return { applied }
  })
}
