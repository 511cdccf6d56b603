// The behaviour suites again, on PostgreSQL: every HTTP-level test of the
// resource features, each test file on a fresh schema of its own. Skipped,
// saying why, where no PostgreSQL server answers; CI always has one.
import { spawnSync } from 'node:child_process'
import pg from 'pg'

const url = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const suites = [
  'test/resources/crud.test.ts', 'test/resources/validation.test.ts', 'test/resources/merge-patch.test.ts', 'test/resources/write-only.test.ts', 'test/resources/number-literals.test.ts', 'test/resources/closed-objects.test.ts', 'test/resources/date-times.test.ts', 'test/resources/model-based.test.ts', 'test/resources/relations.test.ts', 'test/resources/pagination.test.ts', 'test/resources/query-language.test.ts', 'test/resources/query-refusals.test.ts',
  'test/http/errors.test.ts', 'test/http/caching.test.ts', 'test/http/concurrency.test.ts', 'test/http/idempotency.test.ts', 'test/http/negotiation.test.ts',
  'test/auth/credentials.test.ts', 'test/auth/ownership.test.ts', 'test/auth/ownership-model.test.ts', 'test/ops/health.test.ts', 'test/store/migration.test.ts', 'test/store/sort-plans.test.ts', 'test/store/row-counts.test.ts',
  'test/store/value-counts.test.ts', 'test/store/remembered-pages.test.ts', 'test/store/long-names.test.ts', 'test/store/tally-repair.test.ts', 'test/security/owasp.test.ts', 'test/webhooks/delivery.test.ts', 'test/webhooks/target-checks.test.ts', 'test/webhooks/dispatcher.test.ts', 'test/webhooks/cascades.test.ts', 'test/openapi/problem-docs.test.ts'
]

const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
try {
  await client.connect()
  await client.end()
} catch (error) {
  console.log(`# SKIP the PostgreSQL run of the behaviour suites: PostgreSQL is not reachable at ${url} (${error.message})`)
  process.exit(0)
}
console.log(`# the behaviour suites on PostgreSQL (${url})`)
const result = spawnSync('npx', ['tap', ...suites], { stdio: 'inherit', env: { ...process.env, TEST_DATABASE: 'postgres' } })
process.exit(result.status ?? 1)
