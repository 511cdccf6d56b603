// The behaviour suites again, on PostgreSQL: every HTTP-level test of the
// resource features, each test file on a fresh schema of its own. Skipped,
// saying why, where no PostgreSQL server answers; CI always has one.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const url = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
// Run compiled, as `npm test` runs every suite (npm test builds first).
const suites = [
  'resources/crud', 'resources/validation', 'resources/merge-patch', 'resources/write-only', 'resources/number-literals', 'resources/closed-objects', 'resources/date-times', 'resources/model-based', 'resources/relations', 'resources/pagination', 'resources/query-language', 'resources/query-refusals',
  'http/errors', 'http/raw-requests', 'http/request-log', 'http/caching', 'http/create-preconditions', 'http/concurrency', 'http/idempotency', 'http/negotiation',
  'auth/credentials', 'auth/admin-pages', 'auth/admin-conditional', 'auth/ownership', 'auth/ownership-model',
  'ops/health',
  'store/migration', 'store/lone-writes', 'store/gathered-writes', 'store/sort-plans', 'store/row-counts', 'store/value-counts', 'store/remembered-pages', 'store/id-batches', 'store/long-names', 'store/tally-repair',
  'security/owasp',
  'webhooks/delivery', 'webhooks/target-checks', 'webhooks/dispatcher', 'webhooks/cascades',
  'openapi/problem-docs'
].map(name => `dist/test/${name}.test.js`)

const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
try {
  await client.connect()
  await client.end()
} catch (error) {
  console.log(`# SKIP the PostgreSQL run of the behaviour suites: PostgreSQL is not reachable at ${url} (${error.message})`)
  process.exit(0)
}
console.log(`# the behaviour suites on PostgreSQL (${url})`)
const result = spawnSync(process.execPath, [fileURLToPath(new URL('run-tests.mjs', import.meta.url)), ...suites], { stdio: 'inherit', env: { ...process.env, TEST_DATABASE: 'postgres' } })
process.exit(result.status ?? 1)
