/**
 * resourcery keys | clients | token: credential management from the shell,
 * against the same database and key material the server uses. Secrets are
 * printed once, as the last line of stdout, so scripts can take `tail -n 1`.
 */
import { parseArgs } from 'node:util'
import pino from 'pino'
import { scopesOf } from '../auth/openapi-security.js'
import { serviceSecret } from '../auth/key-material.js'
import { hashClientSecret, newApiKey, newClientCredentials, parseScopes } from '../auth/secrets.js'
import { serviceTokenSigner } from '../auth/service-token.js'
import type { Config } from '../config.js'
import { LONGEST_DURATION_SECONDS, parseDuration } from '../duration.js'
import type { Model } from '../resources/model.js'
import type { Store } from '../store/store.js'

export class UsageError extends Error {
  override name = 'UsageError'
}

const out = (line: string): void => { process.stdout.write(`${line}\n`) }

type Credentials = Store['credentials']
type CredentialWork = (credentials: Credentials) => Promise<void>

/** Runs `work` on the credentials of the configured database, its tables brought up to date first. */
async function onCredentials (config: Config, model: Model, work: CredentialWork): Promise<void> {
  // Loaded by the commands that reach the database only: a usage error, and `token`, answer without Kysely and the drivers.
  const { openStore } = await import('../store/open.js')
  const store = await openStore(model, config)
  try {
    await store.migrate()
    await work(store.credentials)
  } finally {
    await store.close()
  }
}

function requireOption (values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`)
  return value
}

function checkedScopes (text: string, model: Model): string[] {
  const scopes = parseScopes(text)
  const known = Object.keys(scopesOf(model.resources))
  const unknown = scopes.filter(scope => !known.includes(scope))
  if (scopes.length === 0) throw new UsageError('--scopes needs at least one scope')
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}; known: ${known.join(' ')}`)
  return scopes
}

function seconds (text: string, option: string): number {
  const value = parseDuration(text)
  if (value === undefined) throw new UsageError(`--${option} takes seconds or a duration such as 30m, 12h, 30d`)
  // 0 would be expired as soon as it is made.
  if (value === 0 || value > LONGEST_DURATION_SECONDS) throw new UsageError(`--${option} must be from 1 second to 100 years (36500d)`)
  return value
}

function parse (args: string[], options: Record<string, { type: 'string' }>) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** A revoke's id, when it is a well-formed one (past 2^53 it would be rounded to another id). */
function revokedId (action: string | undefined, id: string | undefined): number | undefined {
  return action === 'revoke' && id !== undefined && /^[1-9][0-9]*$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : undefined
}

// The arguments are checked before the database is opened: a usage error neither creates a database nor
// waits on one, and is reported as itself even where DATABASE_URL is wrong too.

function keysWork (args: string[], model: Model): CredentialWork {
  const { values, positionals } = parse(args, { name: { type: 'string' }, scopes: { type: 'string' }, expires: { type: 'string' } })
  const [action, id] = positionals
  const revoked = revokedId(action, id)
  if (action === 'create') {
    const name = requireOption(values, 'name')
    const scopes = checkedScopes(requireOption(values, 'scopes'), model)
    const lifetime = typeof values.expires === 'string' ? seconds(values.expires, 'expires') : undefined
    return async credentials => {
      const expiresAt = lifetime === undefined ? undefined : new Date(Date.now() + lifetime * 1000).toISOString()
      const { key, prefix, hash } = newApiKey()
      const record = await credentials.createApiKey({ name, prefix, hash, scopes, ...(expiresAt === undefined ? {} : { expiresAt }) })
      out(`created API key ${record.id} "${record.name}" with scopes: ${scopes.join(' ')}${expiresAt === undefined ? '' : `, expiring ${expiresAt}`}`)
      out('the key is shown only now; send it as "Authorization: Bearer <key>":')
      out(key)
    }
  }
  if (action === 'list') {
    return async credentials => {
      for (const key of await credentials.apiKeys.list()) {
        out(`${key.id}\t${key.prefix}…\t${key.name}\t${key.scopes.join(' ')}\texpires ${key.expiresAt ?? 'never'}\tlast used ${key.lastUsedAt ?? 'never'}`)
      }
    }
  }
  if (revoked !== undefined) {
    return async credentials => {
      if (!await credentials.revokeApiKey(revoked)) throw new UsageError(`no API key ${revoked} (or it is already revoked)`)
      out(`revoked API key ${revoked}`)
    }
  }
  throw new UsageError('usage: resourcery keys create --name N --scopes "a b" [--expires 30d] | keys list | keys revoke ID')
}

export async function keysCommand (args: string[], config: Config, model: Model): Promise<void> {
  await onCredentials(config, model, keysWork(args, model))
}

function clientsWork (args: string[], model: Model): CredentialWork {
  const { values, positionals } = parse(args, { name: { type: 'string' }, scopes: { type: 'string' } })
  const [action, id] = positionals
  const revoked = revokedId(action, id)
  if (action === 'create') {
    const name = requireOption(values, 'name')
    const scopes = checkedScopes(requireOption(values, 'scopes'), model)
    return async credentials => {
      const { clientId, clientSecret } = newClientCredentials()
      const record = await credentials.createClient({ clientId, name, scopes, secretHash: await hashClientSecret(clientSecret) })
      out(`created client ${record.id} "${record.name}" with scopes: ${scopes.join(' ')}`)
      out(`client_id: ${clientId}`)
      out('the client secret is shown only now:')
      out(clientSecret)
    }
  }
  if (action === 'list') {
    return async credentials => {
      for (const client of await credentials.clients.list()) out(`${client.id}\t${client.clientId}\t${client.name}\t${client.scopes.join(' ')}`)
    }
  }
  if (revoked !== undefined) {
    return async credentials => {
      if (!await credentials.revokeClient(revoked)) throw new UsageError(`no client ${revoked} (or it is already revoked)`)
      out(`revoked client ${revoked}`)
    }
  }
  throw new UsageError('usage: resourcery clients create --name N --scopes "a b" | clients list | clients revoke ID')
}

export async function clientsCommand (args: string[], config: Config, model: Model): Promise<void> {
  await onCredentials(config, model, clientsWork(args, model))
}

export async function tokenCommand (args: string[], config: Config, model: Model): Promise<void> {
  const { values } = parse(args, { sub: { type: 'string' }, scopes: { type: 'string' }, ttl: { type: 'string' } })
  const sub = requireOption(values, 'sub')
  const scopes = checkedScopes(requireOption(values, 'scopes'), model)
  const ttl = typeof values.ttl === 'string' ? seconds(values.ttl, 'ttl') : 3600
  const secret = await serviceSecret(config, pino({ level: 'warn' }, pino.destination(2)))
  out(serviceTokenSigner(secret, config)({ sub, scope: scopes.join(' ') }, ttl))
}
