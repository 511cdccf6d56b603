/**
 * Every setting the service reads, as one TypeBox schema of environment
 * variables. `loadConfig` checks them all at once and names each bad variable
 * with what it expects, so a misconfigured deploy fails at start with a
 * message that says what to fix.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { LONGEST_DURATION_SECONDS, LONGEST_TIMER_MS, parseDuration } from './duration.js'
import { corsOriginFault, listedCorsOrigins } from './http/cors.js'
import { trustProxyFault } from './http/transport.js'
import { withoutPassword } from './url-credentials.js'

/** Node keeps an idle connection open a second past keepAliveTimeout, in a timer of its own. */
const NODE_KEEP_ALIVE_MARGIN_MS = 1000

export const Settings = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development', description: 'production tightens defaults that are convenient in development.'
  }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address to listen on.' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'TCP port to listen on (0 picks a free one).' }),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    default: 'sqlite:./data/app.db',
    description: '`sqlite:<file>` (created on first start) or `postgres://user@host:port/db`.'
  }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: 'PostgreSQL connections per process.' }),
  DATABASE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: LONGEST_TIMER_MS, default: 5000, description: 'PostgreSQL: longest wait to connect and for one statement; past it the request is a 503.' }),
  DATABASE_PREPARED_STATEMENTS: Type.Union([Type.Literal('0'), Type.Literal('1')], {
    default: '1', description: 'PostgreSQL: 1 prepares the hot statements once per connection (parsed and planned once). 0 behind a pooler that cannot keep them: PgBouncer in transaction mode without max_prepared_statements (before 1.21 it has none).'
  }),
  SQLITE_SYNCHRONOUS: Type.Union([Type.Literal('FULL'), Type.Literal('NORMAL'), Type.Literal('EXTRA')], {
    default: 'FULL', description: 'FULL: an acknowledged write survives a power loss. NORMAL: only a process crash, but faster.'
  }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(level => Type.Literal(level)), {
    default: 'info', description: 'pino log level.'
  }),
  MAX_PAGE_LIMIT: Type.Integer({ minimum: 1, maximum: 10000, default: 100, description: 'Largest `limit` a list accepts (larger: 400).' }),
  BODY_LIMIT: Type.Integer({ minimum: 1024, default: 1048576, description: 'Largest accepted request body in bytes (larger: 413).' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: LONGEST_TIMER_MS, default: 30000, description: 'Longest time to receive a whole request.' }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: LONGEST_TIMER_MS, default: 10000, description: 'On SIGTERM / SIGINT, longest wait for in-flight requests before exiting anyway.' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data', description: 'Folder for files the service creates itself (the generated JWT secret when JWT_SECRET is not set).' }),
  JWT_SECRET: Type.String({
    default: '',
    writeOnly: true,
    pattern: '^(|.{32,})$',
    description: 'HS256 key that signs and verifies the service\'s own tokens; at least 32 characters. Required when NODE_ENV=production; otherwise generated into DATA_DIR on first start.'
  }),
  JWT_PUBLIC_KEY: Type.String({ default: '', description: 'PEM public key (or a path to a PEM file) that verifies tokens from an external issuer: RSA → RS256, P-256 → ES256, Ed25519 → EdDSA.' }),
  JWT_JWKS_URL: Type.String({ default: '', pattern: '^(|https?://.+)$', description: 'JWKS URL of an external issuer; keys are cached and refetched for an unknown kid.' }),
  JWT_ALGORITHMS: Type.String({ default: 'RS256,ES256,EdDSA', pattern: '^((RS256|RS384|RS512|PS256|ES256|ES384|EdDSA)(,|$))+$', description: 'Asymmetric algorithms accepted from the external issuer (HS256 is only ever the service\'s own).' }),
  JWT_ISSUER: Type.String({ default: '', description: 'Required `iss` of every token (and the `iss` of tokens the service signs); empty: not checked.' }),
  JWT_AUDIENCE: Type.String({ default: '', description: 'Required `aud` of every token (and the `aud` of tokens the service signs); empty: not checked.' }),
  TOKEN_TTL: Type.String({ default: '1h', pattern: '^[1-9][0-9]*[smhd]?$', description: 'Lifetime of tokens from /v1/auth/token: seconds, or with a unit (30m, 1h, 7d).' }),
  API_KEY_CACHE_TTL: Type.String({ default: '5s', pattern: '^(0|[1-9][0-9]*[smhd]?)$', description: 'How long a process reuses an API key it has looked up: revoking a key elsewhere (CLI, another process) takes effect within this; `0`: look up on every request.' }),
  AUTHZ_DENIED_STATUS: Type.Union([Type.Literal('401'), Type.Literal('403')], { default: '401', description: 'Status for a valid credential without the needed scope.' }),
  CORS_ORIGINS: Type.String({ default: '', pattern: '^(|\\*|https?://[^,\\s]+(,https?://[^,\\s]+)*)$', description: 'Comma-separated origins browsers may call from (e.g. https://app.example.com), or `*`; empty: no CORS.' }),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 100, description: 'Requests per window for each credential (and for each client IP before authentication).' }),
  RATE_LIMIT_WINDOW: Type.String({ default: '1m', pattern: '^[1-9][0-9]*[smhd]?$', description: 'The rate-limit window: seconds, or with a unit (30s, 1m, 1h).' }),
  RATE_LIMIT_SCOPES: Type.String({ default: '', pattern: '^(|[a-z][a-z0-9:-]*=[1-9][0-9]*(,[a-z][a-z0-9:-]*=[1-9][0-9]*)*)$', description: 'Per-scope limits, e.g. `admin=1000,projects:read=300`: a credential gets the highest limit among its scopes.' }),
  TOKEN_RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 10, description: 'Requests per window to /v1/auth/token for each client IP.' }),
  REDIS_URL: Type.String({ default: '', pattern: '^(|rediss?://.+)$', description: 'redis://host:port: rate-limit counters shared by every process. Empty: counted in this process.' }),
  TRUST_PROXY: Type.String({
    default: '',
    pattern: '^(|true|[0-9A-Za-z.:/]+(,[0-9A-Za-z.:/]+)*)$',
    description: 'Believe X-Forwarded-For / -Proto from these proxies: addresses or CIDRs (10.0.0.1,10.0.0.0/8), loopback / uniquelocal, a hop count (1), or `true` (any). Empty: never.'
  }),
  TLS_CERT_FILE: Type.String({ default: '', description: 'PEM certificate chain: with TLS_KEY_FILE, serve HTTPS (re-read on SIGHUP).' }),
  TLS_KEY_FILE: Type.String({ default: '', description: 'PEM private key for TLS_CERT_FILE.' }),
  HTTP2: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0', description: '1: serve HTTP/2 (with HTTP/1.1 fallback) over TLS.' }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 500, maximum: LONGEST_TIMER_MS, default: 10000, description: 'Longest time to receive a request\'s headers (slow clients are cut off).' }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: LONGEST_TIMER_MS - NODE_KEEP_ALIVE_MARGIN_MS, default: 5000, description: 'How long an idle keep-alive connection (or HTTP/2 session) stays open.' }),
  MAX_CONNECTIONS: Type.Integer({ minimum: 1, default: 10000, description: 'Concurrent connections accepted; more are refused.' }),
  WEBHOOK_ALLOW_PRIVATE: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0', description: '1: webhooks may target loopback, private and link-local addresses (development, tests). 0: refused at registration and at every delivery.' }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: LONGEST_TIMER_MS, default: 10000, description: 'Longest wait for a webhook target\'s name to resolve, and for its receiver to answer; past it the attempt failed and is retried.' }),
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ minimum: 10, maximum: LONGEST_TIMER_MS, default: 5000, description: 'Delay before a failed webhook delivery\'s first retry; each further retry doubles it (up to 1 h, jittered), for 25 h after the event.' }),
  WEBHOOK_RETENTION: Type.String({ default: '30d', pattern: '^[1-9][0-9]*[smhd]?$', description: 'How long finished webhook deliveries, their attempts and events stay listed before they are purged: at least 2d (7d, 90d).' }),
  WEBHOOK_POLL_MS: Type.Integer({ minimum: 10, maximum: LONGEST_TIMER_MS, default: 1000, description: 'How often each process looks for webhook deliveries that are due (writes in the same process start one at once).' }),
  PUBLIC_URL: Type.String({ default: '', pattern: '^(|https?://[^\\s]+)$', description: 'Base URL clients use (e.g. https://api.example.com); the OpenAPI `servers` entry. Empty: relative.' })
})

export type Settings = Static<typeof Settings>

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}` : Lowercase<S>
export type Config = { readonly [K in keyof Settings as CamelCase<K & string>]: Settings[K] }

export class ConfigError extends Error {
  override name = 'ConfigError'
  constructor (readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`)
  }
}

const camel = (name: string): string =>
  name.toLowerCase().replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase())

/** What a setting's value must be: `: expected …` where the schema says it in a few words, else `. ` and the setting's description. */
function expectation (schema: TSchema): string {
  if (schema.anyOf !== undefined) return `: expected one of ${(schema.anyOf as TSchema[]).map(option => String(option.const)).join(', ')}`
  if (schema.type === 'integer') return `: expected a whole number${schema.minimum === undefined ? '' : ` from ${String(schema.minimum)}`} to ${String(schema.maximum ?? Number.MAX_SAFE_INTEGER)}`
  return schema.description === undefined ? '' : `. ${schema.description}`
}

/**
 * Strings from the environment → typed values; no lenient coercion (`1e3`, `0x10` are refused), and no
 * number past 2^53, which would be rounded to another one.
 */
function parse (schema: TSchema, raw: string): unknown {
  if (schema.type === 'integer') return /^-?(0|[1-9][0-9]*)$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : raw
  return raw
}

export function loadConfig (env: Readonly<Record<string, string | undefined>>): Config {
  const problems: string[] = []
  const config: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(Settings.properties) as Array<[string, TSchema]>) {
    const raw = env[name]
    const value = raw === undefined || raw === '' ? schema.default as unknown : parse(schema, raw.trim())
    if (!Value.Check(schema, value)) {
      // Secrets are marked writeOnly: a bad one is named, never echoed; a URL is echoed without its password.
      const shown = schema.writeOnly === true ? ' (value hidden)' : `=${JSON.stringify(withoutPassword(raw ?? ''))}`
      problems.push(`${name}${shown} is not valid${expectation(schema)}`)
      continue
    }
    config[camel(name)] = value
  }
  if (problems.length === 0) problems.push(...crossChecks(config as Config))
  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze(config) as Config
}

const MIN_WEBHOOK_RETENTION_SECONDS = 2 * 86_400

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/

/** RATE_LIMIT_SCOPES as written (its pattern checked): `admin=1000,projects:read=300` → [['admin', '1000'], …]. */
const scopeLimitPairs = (text: string): Array<[string, string]> =>
  text === '' ? [] : text.split(',').map(pair => pair.split('=') as [string, string])

/** RATE_LIMIT_SCOPES → the limit of each scope. */
export const parseScopeLimits = (text: string): Map<string, number> =>
  new Map(scopeLimitPairs(text).map(([scope, limit]) => [scope, Number(limit)]))

/** Rules that involve more than one variable. */
function crossChecks (config: Config): string[] {
  const problems: string[] = []
  if ((config.tlsCertFile === '') !== (config.tlsKeyFile === '')) problems.push('TLS_CERT_FILE and TLS_KEY_FILE go together: set both to serve HTTPS, or neither')
  const tls = config.tlsCertFile !== ''
  if (!tls && config.trustProxy === '' && !LOOPBACK.test(config.host)) {
    problems.push(`HOST=${config.host} would serve plain HTTP beyond this machine: set TLS_CERT_FILE and TLS_KEY_FILE, or TRUST_PROXY when TLS ends at a proxy in front, or listen on 127.0.0.1`)
  }
  if (config.http2 === '1' && !tls) problems.push('HTTP2=1 needs TLS_CERT_FILE and TLS_KEY_FILE')
  const proxyFault = trustProxyFault(config.trustProxy)
  if (proxyFault !== undefined) problems.push(`TRUST_PROXY=${config.trustProxy} is not valid: ${proxyFault}; list proxy addresses or CIDRs (10.0.0.5,10.0.0.0/8), loopback, linklocal or uniquelocal, a hop count, or true`)
  // An entry that is not written as browsers write Origin would never match, and CORS would fail with no word here.
  for (const entry of listedCorsOrigins(config.corsOrigins)) {
    const fault = corsOriginFault(entry)
    if (fault !== undefined) problems.push(`CORS_ORIGINS entry ${entry} would never match a browser's Origin: ${fault}`)
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    problems.push(`HEADERS_TIMEOUT_MS=${config.headersTimeoutMs} is longer than REQUEST_TIMEOUT_MS=${config.requestTimeoutMs}, which bounds the whole request, headers included: make it at most that`)
  }
  for (const [name, value] of [['TOKEN_TTL', config.tokenTtl], ['API_KEY_CACHE_TTL', config.apiKeyCacheTtl], ['RATE_LIMIT_WINDOW', config.rateLimitWindow], ['WEBHOOK_RETENTION', config.webhookRetention]] as const) {
    if (parseDuration(value)! > LONGEST_DURATION_SECONDS) problems.push(`${name}=${value} is longer than 100 years (36500d)`)
  }
  const roundedLimit = scopeLimitPairs(config.rateLimitScopes).find(([, limit]) => !Number.isSafeInteger(Number(limit)))
  if (roundedLimit !== undefined) problems.push(`RATE_LIMIT_SCOPES=${config.rateLimitScopes} is not valid: the limit in ${roundedLimit.join('=')} is past 2^53, where numbers are rounded`)
  if (parseDuration(config.webhookRetention)! < MIN_WEBHOOK_RETENTION_SECONDS) {
    problems.push(`WEBHOOK_RETENTION=${config.webhookRetention} is too short: a delivery is retried for 25 h and its attempts must stay listed meanwhile; use 2d or more`)
  }
  return problems
}

/** Whether `a` becomes `b` by one edit: a character added, removed or changed, or two neighbours swapped. */
function oneEditApart (a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false
  let start = 0
  while (a[start] === b[start]) start++
  if (a.length !== b.length) {
    const [longer, shorter] = a.length > b.length ? [a, b] : [b, a]
    return longer.slice(start + 1) === shorter.slice(start)
  }
  return a.slice(start + 1) === b.slice(start + 1) || (a[start] === b[start + 1] && a[start + 1] === b[start] && a.slice(start + 2) === b.slice(start + 2))
}

/**
 * Variables one typo away from a setting (CORS_ORIGIN, RATE_LIMT_MAX) or short of its unit
 * (SHUTDOWN_TIMEOUT): a misspelled setting is otherwise ignored without a word, and the service runs on
 * the default. Only names with an underscore are compared, so the environment's own HOME or PWD are
 * never taken for HOST or PORT.
 */
export function misspelledSettings (env: Readonly<Record<string, string | undefined>>): Array<{ readonly name: string, readonly meant: string, readonly warning: string }> {
  const settings = Object.keys(Settings.properties)
  return Object.keys(env)
    .filter(name => name.includes('_') && !settings.includes(name))
    .flatMap(name => {
      const meant = settings.find(setting => oneEditApart(name, setting) || setting === `${name}_MS`)
      return meant === undefined ? [] : [{ name, meant, warning: `${name} is not a setting and is ignored: did you mean ${meant}?` }]
    })
}
