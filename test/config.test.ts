import t from 'tap'
import { ConfigError, loadConfig, misspelledSettings } from '../src/config.js'
import { fromRoot } from './support/paths.js'

t.test('defaults', async t => {
  const config = loadConfig({})
  t.equal(config.host, '127.0.0.1')
  t.equal(config.port, 3000)
  t.equal(config.databaseUrl, 'sqlite:./data/app.db')
  t.equal(config.sqliteSynchronous, 'FULL', 'durable by default')
  t.equal(config.bodyLimit, 1048576)
  t.equal(config.nodeEnv, 'development')
})

t.test('values are parsed strictly', async t => {
  const config = loadConfig({ PORT: '8080', HOST: '0.0.0.0', TRUST_PROXY: '10.0.0.1', DATABASE_URL: 'postgres://u@h:5432/db', LOG_LEVEL: 'debug' })
  t.equal(config.port, 8080)
  t.equal(config.host, '0.0.0.0')
  t.equal(config.logLevel, 'debug')
})

t.test('every bad variable is named with what it expects', async t => {
  let error: unknown
  try {
    loadConfig({ PORT: '80a', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', BODY_LIMIT: '1e6', SQLITE_SYNCHRONOUS: 'OFF' })
  } catch (caught) {
    error = caught
  }
  t.ok(error instanceof ConfigError)
  const problems = (error as ConfigError).problems
  t.equal(problems.length, 5)
  t.match(problems.join('\n'), /PORT="80a" is not valid: expected a whole number from 0 to 65535/)
  t.match(problems.join('\n'), /LOG_LEVEL="loud" is not valid: expected one of fatal, error/)
  t.match(problems.join('\n'), /DATABASE_URL="mysql:\/\/x" is not valid\. `sqlite:<file>` \(created on first start\) or `postgres:/, 'a described setting reads as a sentence')
  t.match(problems.join('\n'), /BODY_LIMIT="1e6"/)
  t.match(problems.join('\n'), /SQLITE_SYNCHRONOUS="OFF" is not valid: expected one of FULL, NORMAL, EXTRA/)
  t.throws(() => loadConfig({ PORT: '70000' }), /PORT/)
})

t.test('a number that a timer or JavaScript would change into another is refused, naming the bound', async t => {
  // Node's timers fire after 1 ms instead of a delay past 2^31-1 ms: a shutdown deadline that ended every
  // shutdown at once, a webhook poll that spun. Past 2^53 a number is rounded: a limit that never counted down.
  t.throws(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '3000000000' }), /SHUTDOWN_TIMEOUT_MS="3000000000" is not valid: expected a whole number from 100 to 2147483647/)
  for (const name of ['DATABASE_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS', 'HEADERS_TIMEOUT_MS', 'KEEP_ALIVE_TIMEOUT_MS', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_RETRY_BASE_MS', 'WEBHOOK_POLL_MS']) {
    // The headers' bound may not pass the request's (checked below): that one is at its longest here.
    t.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '2147483647', [name]: '2147483648' }), new RegExp(`${name}="2147483648" is not valid: expected a whole number from \\d+ to 21474`), name)
  }
  t.equal(loadConfig({ WEBHOOK_POLL_MS: '2147483647' }).webhookPollMs, 2147483647, 'the longest timer is allowed')
  // Node keeps an idle connection a second longer, in a timer of its own.
  t.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '2147483647' }), /KEEP_ALIVE_TIMEOUT_MS="2147483647" is not valid: expected a whole number from 100 to 2147482647/)
  t.throws(() => loadConfig({ RATE_LIMIT_MAX: '99999999999999999999' }), /RATE_LIMIT_MAX="99999999999999999999" is not valid: expected a whole number from 1 to 9007199254740991/)
  t.equal(loadConfig({ RATE_LIMIT_MAX: '9007199254740991' }).rateLimitMax, 9007199254740991)
  t.throws(() => loadConfig({ RATE_LIMIT_SCOPES: 'admin=1000,projects:read=99999999999999999999' }), /RATE_LIMIT_SCOPES=admin=1000,projects:read=99999999999999999999 is not valid: the limit in projects:read=99999999999999999999 is past 2\^53/)
  for (const name of ['TOKEN_TTL', 'API_KEY_CACHE_TTL', 'RATE_LIMIT_WINDOW', 'WEBHOOK_RETENTION']) {
    t.throws(() => loadConfig({ [name]: '36501d' }), new RegExp(`${name}=36501d is longer than 100 years \\(36500d\\)`), name)
    t.doesNotThrow(() => loadConfig({ [name]: '36500d' }), `${name}=36500d`)
  }
})

t.test('the headers cannot be given longer than the whole request', async t => {
  // Node refused the pair only when the server was made: the start ended with its stack trace.
  t.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '5000' }), /HEADERS_TIMEOUT_MS=5000 is longer than REQUEST_TIMEOUT_MS=1000, which bounds the whole request, headers included: make it at most that/)
  t.equal(loadConfig({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '5000' }).headersTimeoutMs, 5000)
})

t.test('a variable one typo away from a setting is named with the setting it was likely meant for', async t => {
  t.same(misspelledSettings({ CORS_ORIGIN: 'https://app.example.com', RATE_LIMT_MAX: '5', DATABSE_URL: 'sqlite:x', SHUTDOWN_TIMEOUT: '5000', JWT_SECRETS: 'x' }).map(({ name, meant }) => ({ name, meant })), [
    { name: 'CORS_ORIGIN', meant: 'CORS_ORIGINS' },
    { name: 'RATE_LIMT_MAX', meant: 'RATE_LIMIT_MAX' },
    { name: 'DATABSE_URL', meant: 'DATABASE_URL' },
    { name: 'SHUTDOWN_TIMEOUT', meant: 'SHUTDOWN_TIMEOUT_MS' },
    { name: 'JWT_SECRETS', meant: 'JWT_SECRET' }
  ])
  // The environment's own variables, and the settings themselves, are left alone.
  t.same(misspelledSettings({ HOME: '/root', PWD: '/', HOSTNAME: 'vm', NODE_OPTIONS: '', NODE_PATH: '', npm_config_cache: '/c', PORT: '80', CORS_ORIGINS: '*' }), [])
})

t.test('plain HTTP only on loopback unless a proxy in front terminates TLS', async t => {
  t.throws(() => loadConfig({ HOST: '0.0.0.0' }), /HOST=0\.0\.0\.0 would serve plain HTTP beyond this machine: set TLS_CERT_FILE and TLS_KEY_FILE, or TRUST_PROXY/)
  t.throws(() => loadConfig({ HOST: '192.168.1.10' }), /plain HTTP/)
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) t.equal(loadConfig({ HOST: host }).host, host)
  t.equal(loadConfig({ HOST: '0.0.0.0', TRUST_PROXY: '10.0.0.0/8' }).trustProxy, '10.0.0.0/8')
  t.equal(loadConfig({ HOST: '0.0.0.0', TLS_CERT_FILE: 'c.pem', TLS_KEY_FILE: 'k.pem' }).host, '0.0.0.0')
  t.throws(() => loadConfig({ TLS_CERT_FILE: 'c.pem' }), /TLS_CERT_FILE and TLS_KEY_FILE go together/)
  t.throws(() => loadConfig({ HTTP2: '1' }), /HTTP2=1 needs TLS/)
})

t.test('TRUST_PROXY is read by the library that will use it: an entry it cannot read names itself', async t => {
  // Before, these stopped the start with proxy-addr's stack trace, naming no variable.
  t.throws(() => loadConfig({ TRUST_PROXY: 'bogus' }), /TRUST_PROXY=bogus is not valid: invalid IP address: bogus; list proxy addresses or CIDRs/)
  t.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' }), /TRUST_PROXY=10\.0\.0\.0\/33 is not valid: invalid range on address/)
  for (const value of ['loopback,10.0.0.1', 'uniquelocal', 'fd00::/8', '2', 'true']) t.equal(loadConfig({ TRUST_PROXY: value }).trustProxy, value, value)
})

t.test('PUBLIC_URL is an http(s) URL', async t => {
  t.throws(() => loadConfig({ PUBLIC_URL: 'ftp://files.example.com' }), /PUBLIC_URL="ftp:\/\/files\.example\.com" is not valid/)
  t.throws(() => loadConfig({ PUBLIC_URL: 'api.example.com' }), /PUBLIC_URL/)
  t.equal(loadConfig({ PUBLIC_URL: 'https://api.example.com/base' }).publicUrl, 'https://api.example.com/base')
})

t.test('CORS_ORIGINS lists origins as browsers send them: an entry that could never match says how to write it', async t => {
  for (const value of ['*', 'https://app.example.com', 'https://app.example.com,http://localhost:5173', 'http://[::1]:3000']) t.equal(loadConfig({ CORS_ORIGINS: value }).corsOrigins, value, value)
  t.throws(() => loadConfig({ CORS_ORIGINS: 'https://app.example.com/' }), /CORS_ORIGINS entry https:\/\/app\.example\.com\/ would never match a browser's Origin: write it as https:\/\/app\.example\.com$/m)
  t.throws(() => loadConfig({ CORS_ORIGINS: 'https://ok.example.com,https://App.Example.com:443/app' }), /entry https:\/\/App\.Example\.com:443\/app would never match a browser's Origin: write it as https:\/\/app\.example\.com$/m)
  t.throws(() => loadConfig({ CORS_ORIGINS: 'http://:80' }), /entry http:\/\/:80 would never match a browser's Origin: it is not a URL/)
})

t.test('webhook history is kept at least as long as a delivery is retried', async t => {
  t.equal(loadConfig({}).webhookRetention, '30d')
  t.equal(loadConfig({ WEBHOOK_RETENTION: '48h' }).webhookRetention, '48h')
  t.throws(() => loadConfig({ WEBHOOK_RETENTION: '1d' }), /WEBHOOK_RETENTION=1d is too short: a delivery is retried for 25 h/)
  t.throws(() => loadConfig({ WEBHOOK_RETENTION: 'forever' }), /WEBHOOK_RETENTION="forever" is not valid/)
})

t.test('the README documents every configuration variable', async t => {
  const { readFile } = await import('node:fs/promises')
  const { Settings } = await import('../src/config.js')
  const readme = await readFile(fromRoot('README.md'), 'utf8')
  for (const name of Object.keys(Settings.properties)) t.match(readme, `| \`${name}\` |`, `README lists ${name}`)
})

t.test('a bad connection URL is echoed without its password', async t => {
  const error = t.throws(() => loadConfig({ DATABASE_URL: 'mysql://app:s3cret@db/app', REDIS_URL: 'http://:s3cret@cache:6379' })) as ConfigError
  t.match(error.problems, [/^DATABASE_URL="mysql:\/\/app:\*\*\*@db\/app" is not valid/, /^REDIS_URL="http:\/\/:\*\*\*@cache:6379" is not valid/])
  t.notMatch(error.message, /s3cret/)
})
