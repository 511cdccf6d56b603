/**
 * npm run bench [-- --quick]: the service's throughput and latency with the
 * full production stack, as ratios to a bare Fastify baseline measured in the
 * same run on the same machine, right before each measured run (a shared
 * machine's speed drifts by tens of percent within minutes; a ratio against a
 * baseline taken at the start mixed that drift into every figure). The
 * servers are pinned to CPU 0 and the load generator (this process) to CPU 1
 * when taskset exists.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import BetterSqlite3 from 'better-sqlite3'
import { createSigner } from 'fast-jwt'
import { hashApiKey, newApiKey } from '../src/auth/secrets.js'
import { cursorCodec } from '../src/resources/cursor.js'
import { seed } from './seed.js'

const quick = process.argv.includes('--quick')
const DURATION = quick ? 3 : 10
const RUNS = quick ? 1 : 3
/** Seconds of load before each measured workload: the JIT settles on the workload's hot paths (1 s left the first one measurably low). */
const WARM_UP = quick ? 1 : 3
const CONNECTIONS = 50
const SECRET = 'bench-secret-bench-secret-bench-secret-123'
const pinned = spawnSync('which', ['taskset']).status === 0
/** Seconds of baseline load measured right before each run of a workload, which is compared with it. */
const BASELINE_SECONDS = quick ? 2 : 5

/** The Node flags `npm start` gives the server, read from package.json so the bench runs it as production does. */
function startFlags (): string[] {
  const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
  return /\bnode ((?:--\S+ )*)dist\/src\/server\.js/.exec(scripts.start)?.[1]?.split(' ').filter(Boolean) ?? []
}

if (pinned && process.env.RESOURCERY_BENCH_PINNED !== '1') {
  const child = spawnSync('taskset', ['-c', '1', process.execPath, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, RESOURCERY_BENCH_PINNED: '1' } })
  process.exit(child.status ?? 1)
}

const dist = fileURLToPath(new URL('..', import.meta.url))
interface Server { child: ChildProcess, base: string }

async function start (args: string[], env: Record<string, string>, port: number): Promise<Server> {
  const command = pinned ? 'taskset' : process.execPath
  const child = spawn(command, pinned ? ['-c', '0', process.execPath, ...args] : args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  child.stdout!.resume()
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/${args[1] === 'hello' ? 'hello' : 'health'}`)).status < 500) return { child, base }
    } catch { /* not yet listening */ }
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`server ${args.join(' ')} did not start`)
}

/** CPU seconds (user + system) the process has used so far, from /proc (clock ticks of 1/100 s). */
function cpuSeconds (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  // After the command name: field 14 (utime) and 15 (stime) of proc(5) are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / 100
}

function rssMb (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

interface Workload {
  name: string
  method?: 'GET' | 'POST' | 'PATCH'
  path: string
  headers?: Record<string, string>
  body?: string
  expect?: number
  /** `{id}` in the path becomes a random id up to this, per request (clients editing different records). */
  ids?: number
}
interface Figures {
  rps: number
  /** rps over the baseline's req/s measured just before this run: the machine's speed drifts, so each run has its own reference. */
  ratio: number
  baselineRps: number
  p50: number
  p99: number
  rssMb: number
  /** Share of its CPU the server used during the run: well under 1, the load generator was the limit, not the server. */
  serverBusy: number
  /** Server CPU per answer, in µs: what a request costs whoever is the bottleneck. */
  cpuUs: number
  /** The baseline's CPU per answer over this one's: the ratio the server alone would reach if both were CPU-bound. */
  cpuRatio: number
  errors: number
}

const HELLO: Workload = { name: 'baseline', path: '/hello' }
const NAIVE_ONE = 'naive stack: GET one task (JWT)'
const NAIVE_LIST = 'naive stack: list of 20 + count'

function load (server: Server, workload: Workload, duration: number): ReturnType<typeof autocannon> {
  const { ids } = workload
  return autocannon({
    url: server.base + workload.path,
    connections: CONNECTIONS,
    duration,
    method: workload.method ?? 'GET',
    headers: workload.headers,
    body: workload.body,
    ...(ids === undefined
      ? {}
      : { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, path: workload.path.replace('{id}', String(1 + Math.floor(Math.random() * ids))) }) }] })
  })
}

interface Run { rps: number, p50: number, p99: number, rssMb: number, serverBusy: number, cpuUs: number, errors: number }

async function run (server: Server, workload: Workload, duration: number): Promise<Run> {
  const pid = server.child.pid!
  let peak = 0
  const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)) }, 250)
  const cpuBefore = cpuSeconds(pid)
  const started = process.hrtime.bigint()
  const result = await load(server, workload, duration)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const cpu = cpuSeconds(pid) - cpuBefore
  clearInterval(sampler)
  // Every answer must have the expected status; anything else is counted as an error.
  const wrong = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => Number(code) !== (workload.expect ?? 200)).reduce((n, [, stats]) => n + (stats.count ?? 0), 0)
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    rssMb: Math.round(peak),
    serverBusy: cpu / seconds,
    cpuUs: cpu * 1e6 / Math.max(1, result.requests.total),
    errors: result.errors + result.timeouts + wrong
  }
}

async function measure (server: Server, workload: Workload, baseline: Server): Promise<Figures> {
  const runs: Figures[] = []
  await load(server, workload, WARM_UP)
  for (let i = 0; i < RUNS; i++) {
    const reference = server === baseline ? undefined : await run(baseline, HELLO, BASELINE_SECONDS)
    const measured = await run(server, workload, DURATION)
    runs.push({
      ...measured,
      ratio: measured.rps / (reference?.rps ?? measured.rps),
      baselineRps: reference?.rps ?? measured.rps,
      cpuRatio: (reference?.cpuUs ?? measured.cpuUs) / measured.cpuUs
    })
  }
  runs.sort((a, b) => a.ratio - b.ratio || a.rps - b.rps)
  return runs[Math.floor(runs.length / 2)]!
}

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'resourcery-bench-'))
  const results: Record<string, Figures> = {}
  const table: string[] = []
  const record = (name: string, figures: Figures): void => {
    results[name] = { ...figures, ratio: Number(figures.ratio.toFixed(3)), cpuRatio: Number(figures.cpuRatio.toFixed(3)), serverBusy: Number(figures.serverBusy.toFixed(2)), cpuUs: Number(figures.cpuUs.toFixed(1)) }
    table.push(`${name.padEnd(34)} ${figures.rps.toFixed(0).padStart(8)} req/s  ratio ${figures.ratio.toFixed(3)} (baseline ${figures.baselineRps.toFixed(0)})  p50 ${String(figures.p50).padStart(4)} ms  p99 ${String(figures.p99).padStart(4)} ms  rss ${String(figures.rssMb).padStart(4)} MB  server busy ${(100 * figures.serverBusy).toFixed(0).padStart(3)}%  ${figures.cpuUs.toFixed(0).padStart(4)} µs/req  cpu ratio ${figures.cpuRatio.toFixed(3)}${figures.errors > 0 ? `  errors ${figures.errors}` : ''}`)
  }

  // The baseline server stays up (idle between its runs) for the whole bench: every run of a workload is compared with a baseline run just before it.
  const hello = await start([join(dist, 'bench/baseline.js'), 'hello', '3900'], {}, 3900)
  record('baseline: bare Fastify hello', await measure(hello, HELLO, hello))
  const fsync = await start([join(dist, 'bench/baseline.js'), 'insert', '3901', join(dir, 'bare.db')], {}, 3901)
  record('bare better-sqlite3 insert (FULL)', await measure(fsync, { name: 'bare insert', method: 'POST', path: '/items', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}', expect: 201 }, hello))
  fsync.child.kill()
  // What the contract's headers and a log line per request cost with no engine behind them: the most GET one could reach.
  const floor = await start([join(dist, 'bench/baseline.js'), 'floor', '3903'], {}, 3903)
  record('contract floor (headers, log line)', await measure(floor, { name: 'floor', path: '/v1/tasks/12345' }, hello))
  floor.child.kill()

  for (const [label, tasks] of quick ? [['100k', 100_000]] as const : [['100k', 100_000], ['1M', 1_000_000]] as const) {
    const file = join(dir, `${label}.db`)
    process.stderr.write(`seeding ${label} tasks…\n`)
    await seed(file, 10_000, tasks)
    const jwt = `Bearer ${createSigner({ key: SECRET, algorithm: 'HS256', expiresIn: 3_600_000 })({ sub: 'bench', scope: 'admin' })}`
    const auth = { authorization: jwt }
    if (label === '100k') {
      // The stack the budget's premise names, on the same file, before the service opens it.
      const naive = await start([join(dist, 'bench/naive.js'), '3904', file, SECRET], {}, 3904)
      record(NAIVE_ONE, await measure(naive, { name: 'naive GET one', path: '/v1/tasks/12345', headers: auth }, hello))
      record(NAIVE_LIST, await measure(naive, { name: 'naive list', path: '/v1/tasks?limit=20', headers: auth }, hello))
      naive.child.kill()
    }
    const db = new BetterSqlite3(file)
    const key = newApiKey()
    db.prepare('insert into resourcery_api_keys (name, prefix, hash, scopes, createdAt) values (?, ?, ?, ?, ?)').run('bench', key.prefix, hashApiKey(key.key), '["admin"]', new Date().toISOString())
    const server = await start([...startFlags(), join(dist, 'src/server.js')], {
      NODE_ENV: 'production', DATABASE_URL: `sqlite:${file}`, PORT: '3902', JWT_SECRET: SECRET, RATE_LIMIT_MAX: '100000000', LOG_LEVEL: 'info', DATA_DIR: dir
    }, 3902)
    const secretRow = db.prepare("select value from resourcery_secrets where name = 'cursor-signing'").get() as { value: string }
    db.close()
    const etag = (await fetch(`${server.base}/v1/tasks/12345`, { headers: auth })).headers.get('etag')!
    const cursors = cursorCodec(Buffer.from(secretRow.value, 'base64'))
    const deepCursor = cursors.encode({ sort: 'id', values: [80_000] })
    // Under a key that can be missing, about 80 % of the way (months 1–12 and the tasks without a date last).
    const dueCursor = cursors.encode({ sort: 'dueDate,id', values: ['2026-10-15', 50_000] })
    // Measured at both sizes: their 1M / 100k ratios are the growth figures.
    const scaled: Workload[] = [
      { name: 'GET list of 20 + X-Total-Count', path: '/v1/tasks?limit=20', headers: auth },
      { name: 'GET filtered + sorted list', path: '/v1/tasks?filter=active&sort=-priority&limit=20', headers: auth },
      // An equality on one column, sorted on another: SQLite alone would read and sort a third of the table (index-choice.ts).
      { name: 'GET status=todo, sort=-priority', path: '/v1/tasks?status=todo&sort=-priority&limit=20', headers: auth },
      { name: 'GET deep position by cursor', path: `/v1/tasks?limit=20&cursor=${deepCursor}`, headers: auth },
      { name: 'GET deep cursor, sort=dueDate', path: `/v1/tasks?sort=dueDate&limit=20&cursor=${dueCursor}`, headers: auth }
    ]
    const workloads: Workload[] = label === '100k'
      ? [
          { name: 'GET one task (JWT)', path: '/v1/tasks/12345', headers: auth },
          { name: 'GET one task (API key)', path: '/v1/tasks/12345', headers: { authorization: `Bearer ${key.key}` } },
          { name: 'GET one task, 304 revalidation', path: '/v1/tasks/12345', headers: { ...auth, 'if-none-match': etag }, expect: 304 },
          ...scaled,
          // What a browser sends: every list it reads is compressed (content-coding.ts).
          { name: 'GET list of 20, browser (br)', path: '/v1/tasks?limit=20', headers: { ...auth, 'accept-encoding': 'gzip, deflate, br' } },
          { name: 'GET deep page (page 4000)', path: '/v1/tasks?page=4000&limit=20', headers: auth },
          { name: 'POST a task (durable, FULL)', method: 'POST', path: '/v1/tasks', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"bench","projectId":1}', expect: 201 },
          { name: 'PATCH a task with If-Match', method: 'PATCH', path: '/v1/tasks/{id}', ids: tasks, headers: { ...auth, 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: '{"priority":2}' }
        ]
      : scaled
    for (const workload of workloads) {
      process.stderr.write(`${label}: ${workload.name}…\n`)
      record(`${workload.name} [${label}]`, await measure(server, workload, hello))
    }
    server.child.kill('SIGTERM')
  }
  hello.child.kill()
  // The seeded databases (about 1 GB with the 1M one and the bare insert's WAL) go with the run.
  rmSync(dir, { recursive: true, force: true })
  // Growth compares the ratios, not req/s: minutes apart, the machine's own speed has drifted.
  for (const name of Object.keys(results).filter(key => key.endsWith(' [1M]')).map(key => key.slice(0, -' [1M]'.length))) {
    const small = results[`${name} [100k]`]
    const large = results[`${name} [1M]`]
    if (small !== undefined && large !== undefined) table.push(`growth 1M / 100k: ${name.padEnd(32)} ${(large.ratio / small.ratio).toFixed(3)}`)
  }
  // How far past the budget's premise the service is: its ratio over the naive stack's, same workload shape, same run.
  for (const [service, naive] of [['GET one task (JWT) [100k]', NAIVE_ONE], ['GET list of 20 + X-Total-Count [100k]', NAIVE_LIST]] as const) {
    const ours = results[service]
    const theirs = results[naive]
    if (ours !== undefined && theirs !== undefined) table.push(`service / naive stack: ${service.padEnd(38)} ${(ours.ratio / theirs.ratio).toFixed(3)}`)
  }
  process.stdout.write(`\n${table.join('\n')}\n`)
  mkdirSync('bench/results', { recursive: true })
  const out = `bench/results/${new Date().toISOString().replace(/[:.]/g, '-')}${quick ? '-quick' : ''}.json`
  writeFileSync(out, `${JSON.stringify({ quick, durationSeconds: DURATION, runs: RUNS, connections: CONNECTIONS, pinned, results }, null, 2)}\n`)
  process.stdout.write(`written ${out}\n`)
}

await main()
