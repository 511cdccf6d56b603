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
import { parseDuration } from '../duration.js'
import type { Model } from '../resources/model.js'
import { openStore } from '../store/open.js'
import type { Store } from '../store/store.js'

export class UsageError extends Error {
  override name = 'UsageError'
}

const out = (line: string): void => { process.stdout.write(`${line}\n`) }

async function withStore<T> (config: Config, model: Model, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(model, config)
  try {
    await store.migrate()
    return await work(store)
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

/**
 * The longest lifetime a key or token may be given: its expiry must still be
 * a date RFC 3339 can write (a four-digit year), where 3,000,000 days wrote
 * `+010190-…` and 100,000,000 days ended the command with a stack trace.
 */
const LONGEST_SECONDS = 100 * 365 * 86_400

function seconds (text: string, option: string): number {
  const value = parseDuration(text)
  if (value === undefined) throw new UsageError(`--${option} takes seconds or a duration such as 30m, 12h, 30d`)
  // 0 would be expired as soon as it is made.
  if (value === 0 || value > LONGEST_SECONDS) throw new UsageError(`--${option} must be from 1 second to 100 years (36500d)`)
  return value
}

function parse (args: string[], options: Record<string, { type: 'string' }>) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

export async function keysCommand (args: string[], config: Config, model: Model): Promise<void> {
  const { values, positionals } = parse(args, { name: { type: 'string' }, scopes: { type: 'string' }, expires: { type: 'string' } })
  const [action, id] = positionals
  await withStore(config, model, async ({ credentials }) => {
    if (action === 'create') {
      const name = requireOption(values, 'name')
      const scopes = checkedScopes(requireOption(values, 'scopes'), model)
      const expiresAt = typeof values.expires === 'string' ? new Date(Date.now() + seconds(values.expires, 'expires') * 1000).toISOString() : undefined
      const { key, prefix, hash } = newApiKey()
      const record = await credentials.createApiKey({ name, prefix, hash, scopes, ...(expiresAt === undefined ? {} : { expiresAt }) })
      out(`created API key ${record.id} "${record.name}" with scopes: ${scopes.join(' ')}${expiresAt === undefined ? '' : `, expiring ${expiresAt}`}`)
      out('the key is shown only now; send it as "Authorization: Bearer <key>":')
      out(key)
    } else if (action === 'list') {
      for (const key of await credentials.listApiKeys()) {
        out(`${key.id}\t${key.prefix}…\t${key.name}\t${key.scopes.join(' ')}\texpires ${key.expiresAt ?? 'never'}\tlast used ${key.lastUsedAt ?? 'never'}`)
      }
    } else if (action === 'revoke' && id !== undefined && /^[1-9][0-9]*$/.test(id)) {
      if (!await credentials.revokeApiKey(Number(id))) throw new UsageError(`no API key ${id} (or it is already revoked)`)
      out(`revoked API key ${id}`)
    } else {
      throw new UsageError('usage: resourcery keys create --name N --scopes "a b" [--expires 30d] | keys list | keys revoke ID')
    }
  })
}

export async function clientsCommand (args: string[], config: Config, model: Model): Promise<void> {
  const { values, positionals } = parse(args, { name: { type: 'string' }, scopes: { type: 'string' } })
  const [action, id] = positionals
  await withStore(config, model, async ({ credentials }) => {
    if (action === 'create') {
      const name = requireOption(values, 'name')
      const scopes = checkedScopes(requireOption(values, 'scopes'), model)
      const { clientId, clientSecret } = newClientCredentials()
      const record = await credentials.createClient({ clientId, name, scopes, secretHash: await hashClientSecret(clientSecret) })
      out(`created client ${record.id} "${record.name}" with scopes: ${scopes.join(' ')}`)
      out(`client_id: ${clientId}`)
      out('the client secret is shown only now:')
      out(clientSecret)
    } else if (action === 'list') {
      for (const client of await credentials.listClients()) out(`${client.id}\t${client.clientId}\t${client.name}\t${client.scopes.join(' ')}`)
    } else if (action === 'revoke' && id !== undefined && /^[1-9][0-9]*$/.test(id)) {
      if (!await credentials.revokeClient(Number(id))) throw new UsageError(`no client ${id} (or it is already revoked)`)
      out(`revoked client ${id}`)
    } else {
      throw new UsageError('usage: resourcery clients create --name N --scopes "a b" | clients list | clients revoke ID')
    }
  })
}

export async function tokenCommand (args: string[], config: Config, model: Model): Promise<void> {
  const { values } = parse(args, { sub: { type: 'string' }, scopes: { type: 'string' }, ttl: { type: 'string' } })
  const sub = requireOption(values, 'sub')
  const scopes = checkedScopes(requireOption(values, 'scopes'), model)
  const ttl = typeof values.ttl === 'string' ? seconds(values.ttl, 'ttl') : 3600
  const secret = await serviceSecret(config, pino({ level: 'warn' }, pino.destination(2)))
  out(serviceTokenSigner(secret, config)({ sub, scope: scopes.join(' ') }, ttl))
}
