/**
 * Storage of credentials: API keys (kept only as SHA-256 hashes of
 * high-entropy keys) and OAuth clients (secrets kept only as slow scrypt
 * hashes). Engine tables, not resources: they never appear in /v1/{collection}.
 */
import type { Kysely, Transaction } from 'kysely'
import { isoTimestamp, type Database, type Dialect } from './dialect.js'
import { liveItems, type LiveItems } from './live-items.js'

export const API_KEYS_TABLE = 'resourcery_api_keys'
export const CLIENTS_TABLE = 'resourcery_clients'

export interface ApiKeyRecord {
  readonly id: number
  readonly name: string
  /** The first characters of the key, enough to recognise it in a list. */
  readonly prefix: string
  readonly scopes: readonly string[]
  readonly createdAt: string
  readonly expiresAt?: string
  readonly lastUsedAt?: string
  readonly revokedAt?: string
}

export interface ClientRecord {
  readonly id: number
  readonly clientId: string
  readonly name: string
  readonly scopes: readonly string[]
  readonly createdAt: string
  readonly revokedAt?: string
  /** scrypt hash, `salt:hash` in base64; never leaves the server. */
  readonly secretHash: string
}

export interface CredentialStore {
  createApiKey (key: { name: string, prefix: string, hash: string, scopes: readonly string[], expiresAt?: string }): Promise<ApiKeyRecord>
  /** The API keys not revoked. */
  readonly apiKeys: LiveItems<ApiKeyRecord>
  findApiKey (hash: string): Promise<ApiKeyRecord | undefined>
  revokeApiKey (id: number): Promise<boolean>
  touchApiKey (id: number, at: string): Promise<void>
  createClient (client: { clientId: string, name: string, scopes: readonly string[], secretHash: string }): Promise<ClientRecord>
  /** The OAuth clients not revoked. */
  readonly clients: LiveItems<ClientRecord>
  findClient (clientId: string): Promise<ClientRecord | undefined>
  revokeClient (id: number): Promise<boolean>
}

type Row = Record<string, unknown>

const optional = (value: unknown): string | undefined => value === null || value === undefined ? undefined : isoTimestamp(value)

/** The named timestamp columns that hold a value; absent ones stay absent, never null. */
function optionalTimestamps (row: Row, names: readonly string[]): Record<string, string> {
  const present: Record<string, string> = {}
  for (const name of names) {
    const value = optional(row[name])
    if (value !== undefined) present[name] = value
  }
  return present
}

/** What API keys and clients have in common: id, name, scopes, creation and revocation. */
function credential (row: Row) {
  return {
    id: Number(row.id),
    name: String(row.name),
    scopes: JSON.parse(String(row.scopes)) as string[],
    createdAt: isoTimestamp(row.createdAt)
  }
}

function apiKey (row: Row): ApiKeyRecord {
  return { ...credential(row), prefix: String(row.prefix), ...optionalTimestamps(row, ['expiresAt', 'lastUsedAt', 'revokedAt']) }
}

function client (row: Row): ClientRecord {
  return { ...credential(row), clientId: String(row.clientId), secretHash: String(row.secretHash), ...optionalTimestamps(row, ['revokedAt']) }
}

/** Creates the credential tables when missing; part of every migration. */
export async function createCredentialTables (trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  await trx.schema.createTable(API_KEYS_TABLE).ifNotExists()
    .addColumn('id', dialect.columnType('id'), column => dialect.idColumn(column))
    .addColumn('name', 'text', column => column.notNull())
    .addColumn('prefix', 'text', column => column.notNull())
    .addColumn('hash', 'text', column => column.notNull().unique())
    .addColumn('scopes', 'text', column => column.notNull())
    .addColumn('createdAt', dialect.columnType('timestamp'), column => column.notNull())
    .addColumn('expiresAt', dialect.columnType('timestamp'))
    .addColumn('lastUsedAt', dialect.columnType('timestamp'))
    .addColumn('revokedAt', dialect.columnType('timestamp'))
    .execute()
  await trx.schema.createTable(CLIENTS_TABLE).ifNotExists()
    .addColumn('id', dialect.columnType('id'), column => dialect.idColumn(column))
    .addColumn('clientId', 'text', column => column.notNull().unique())
    .addColumn('name', 'text', column => column.notNull())
    .addColumn('scopes', 'text', column => column.notNull())
    .addColumn('secretHash', 'text', column => column.notNull())
    .addColumn('createdAt', dialect.columnType('timestamp'), column => column.notNull())
    .addColumn('revokedAt', dialect.columnType('timestamp'))
    .execute()
}

/** The last instant RFC 3339 can write (a four-digit year): what an API key's expiry beyond it becomes. */
export const LAST_EXPIRY = '9999-12-31T23:59:59.999Z'

/**
 * Before the CLI bounded `--expires` (1 s to 100 years), `--expires 3000000d`
 * stored an expiry past year 9999, written `+010190-…`: not RFC 3339, so no
 * list of API keys could be serialized (500) while such a key existed. On
 * start, such an expiry becomes the last instant RFC 3339 can write, which
 * comes no sooner for any purpose. Keys are few, so they are read whole.
 */
export async function repairFarExpiries (trx: Transaction<Database>, dialect: Dialect): Promise<string[]> {
  const rows = await trx.selectFrom(API_KEYS_TABLE).select(['id', 'expiresAt']).where('expiresAt', 'is not', null).execute()
  const repaired: string[] = []
  for (const row of rows) {
    const expiry = String(dialect.decode('timestamp', row.expiresAt))
    if (/^\d{4}-/.test(expiry)) continue
    await trx.updateTable(API_KEYS_TABLE).set({ expiresAt: dialect.encode('timestamp', LAST_EXPIRY) }).where('id', '=', row.id).execute()
    repaired.push(`set the expiry of API key ${String(row.id)} (${expiry}) to ${LAST_EXPIRY}`)
  }
  return repaired
}

export function credentialStore (db: Kysely<Database>): CredentialStore {
  const now = (): string => new Date().toISOString()
  const revoke = async (table: string, id: number): Promise<boolean> => {
    const result = await db.updateTable(table).set({ revokedAt: now() }).where('id', '=', id).where('revokedAt', 'is', null).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
  return {
    async createApiKey ({ name, prefix, hash, scopes, expiresAt }) {
      const row = await db.insertInto(API_KEYS_TABLE)
        .values({ name, prefix, hash, scopes: JSON.stringify(scopes), createdAt: now(), expiresAt: expiresAt ?? null })
        .returningAll().executeTakeFirstOrThrow()
      return apiKey(row)
    },
    apiKeys: liveItems(db, API_KEYS_TABLE, apiKey, true),
    async findApiKey (hash) {
      const row = await db.selectFrom(API_KEYS_TABLE).selectAll().where('hash', '=', hash).executeTakeFirst()
      return row === undefined ? undefined : apiKey(row)
    },
    revokeApiKey: async id => await revoke(API_KEYS_TABLE, id),
    async touchApiKey (id, at) {
      await db.updateTable(API_KEYS_TABLE).set({ lastUsedAt: at }).where('id', '=', id).execute()
    },
    async createClient ({ clientId, name, scopes, secretHash }) {
      const row = await db.insertInto(CLIENTS_TABLE)
        .values({ clientId, name, scopes: JSON.stringify(scopes), secretHash, createdAt: now() })
        .returningAll().executeTakeFirstOrThrow()
      return client(row)
    },
    clients: liveItems(db, CLIENTS_TABLE, client, true),
    async findClient (clientId) {
      const row = await db.selectFrom(CLIENTS_TABLE).selectAll().where('clientId', '=', clientId).executeTakeFirst()
      return row === undefined ? undefined : client(row)
    },
    revokeClient: async id => await revoke(CLIENTS_TABLE, id)
  }
}
