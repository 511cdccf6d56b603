/**
 * npm run bench:postgres [-- --quick]: the service as it scales out, on
 * PostgreSQL with its rate-limit counters in Redis, under the SQLite bench's
 * workloads (100,000 tasks), as ratios to the same bare Fastify baseline,
 * measured the same way (measure.ts). The budget is for SQLite; this
 * is a record of the other path, so that a change to it is measured too.
 * Only the service is pinned (CPU 0) and the load generator (CPU 1):
 * PostgreSQL and Redis run where the kernel puts them, on the same two cores,
 * and each request waits for their answers over loopback. The writes are
 * measured a second time with a webhook subscription active.
 *
 * BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test) gets
 * a schema of its own, dropped at the end; BENCH_REDIS_URL defaults to
 * redis://127.0.0.1:6379.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { cursorCodec } from '../src/resources/cursor.js'
import { PROJECTS, seedPostgres } from './seed.js'
import { dist, HELLO, measure, pinLoadGenerator, start, stop, type Server } from './measure.js'
import { allWorkloads, benchAuth, resultsTable, startService, subscribedWriteWorkloads, SUBSCRIPTION, writeResults } from './service.js'

pinLoadGenerator()

const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Runs `use` on a client of `url` and closes it. */
async function withClient<T> (url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

async function main (): Promise<void> {
  const schema = `bench_${randomUUID().replace(/-/g, '')}`
  await withClient(postgresUrl, async client => await client.query(`create schema ${schema}`))
  const url = new URL(postgresUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const dataDir = mkdtempSync(join(tmpdir(), 'resourcery-bench-pg-'))
  const { results, table, record } = resultsTable()
  const servers: Server[] = []
  try {
    const hello = await start([join(dist, 'bench/baseline.js'), 'hello', '3900'], {}, 3900)
    servers.push(hello)
    record('baseline: bare Fastify hello', await measure(hello, HELLO, hello))
    process.stderr.write('seeding 100k tasks on PostgreSQL…\n')
    await seedPostgres(url.toString(), PROJECTS, 100_000)
    const service = await startService(3906, { DATABASE_URL: url.toString(), REDIS_URL: redisUrl, DATA_DIR: dataDir })
    servers.push(service)
    const secret = await withClient(url.toString(), async client =>
      (await client.query<{ value: string }>("select value from resourcery_secrets where name = 'cursor-signing'")).rows[0]!.value)
    const auth = benchAuth()
    const workloads = await allWorkloads({ base: service.base, cursors: cursorCodec(Buffer.from(secret, 'base64')) }, auth, 100_000)
    // Last, the writes with a subscription active: from then on every write adds its event, in its transaction.
    const subscribed = subscribedWriteWorkloads(auth, 100_000)
    for (const workload of [...workloads, ...subscribed]) {
      if (workload === subscribed[0]) await withClient(url.toString(), async client => await client.query(SUBSCRIPTION))
      process.stderr.write(`postgres: ${workload.name}…\n`)
      record(`${workload.name} [postgres]`, await measure(service, workload, hello))
    }
  } finally {
    // Stopped before the schema goes: a service still writing on its way out deadlocked a drop beside it.
    await Promise.all(servers.map(stop))
    rmSync(dataDir, { recursive: true, force: true })
    await withClient(postgresUrl, async client => await client.query(`drop schema ${schema} cascade`))
  }
  process.stdout.write(`\n${table.join('\n')}\nwritten ${writeResults('-postgres', { results })}\n`)
}

await main()
