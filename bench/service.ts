/**
 * The service as the benches run it (run.ts on SQLite, postgres.ts on
 * PostgreSQL + Redis): production settings and `npm start`'s Node flags, a
 * JWT it accepts, the workloads both measure, and how a result is printed.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner } from 'fast-jwt'
import type { CursorCodec } from '../src/resources/cursor.js'
import { CONNECTIONS, dist, DURATION, pinned, quick, RUNS, start, type Figures, type Server, type Workload } from './measure.js'
import { PROJECTS } from './seed.js'
import { startFlags } from './start-flags.js'

/** The HS256 key of the benches' servers (the naive stack's too). */
export const SECRET = 'bench-secret-bench-secret-bench-secret-123'

/** A JWT with the admin scope, as the service verifies it. */
export function benchAuth (): Record<string, string> {
  return { authorization: `Bearer ${createSigner({ key: SECRET, algorithm: 'HS256', expiresIn: 3_600_000 })({ sub: 'bench', scope: 'admin' })}` }
}

/**
 * The built server with the full production stack; the rate limit raised so
 * it counts but never refuses. `nodeFlags` follow `npm start`'s; `build` is
 * the dist/ folder to run (another checkout's, to compare with it).
 */
export async function startService (port: number, env: Record<string, string>, nodeFlags: readonly string[] = [], build = dist): Promise<Server> {
  return await start([...startFlags(join(build, '..')), ...nodeFlags, join(build, 'src/server.js')], {
    NODE_ENV: 'production', PORT: String(port), JWT_SECRET: SECRET, RATE_LIMIT_MAX: '100000000', LOG_LEVEL: 'info', ...env
  }, port)
}

/** The task every GET-one workload reads. */
export const RECORD_PATH = '/v1/tasks/12345'

/** The list reads; on SQLite also measured at 1,000,000 tasks, for their growth. */
export function listWorkloads (cursors: CursorCodec, auth: Record<string, string>): Workload[] {
  const deepCursor = cursors.encode({ sort: 'id', values: [80_000] })
  // Under a key that can be missing, about 80 % of the way (months 1–12 and the tasks without a date last).
  const dueCursor = cursors.encode({ sort: 'dueDate,id', values: ['2026-10-15', 50_000] })
  return [
    { name: 'GET list of 20 + X-Total-Count', path: '/v1/tasks?limit=20', headers: auth },
    { name: 'GET filtered + sorted list', path: '/v1/tasks?filter=active&sort=-priority&limit=20', headers: auth },
    // An equality on one column, sorted on another: SQLite alone would read and sort a third of the table (index-choice.ts).
    { name: 'GET status=todo, sort=-priority', path: '/v1/tasks?status=todo&sort=-priority&limit=20', headers: auth },
    { name: 'GET deep position by cursor', path: `/v1/tasks?limit=20&cursor=${deepCursor}`, headers: auth },
    { name: 'GET deep cursor, sort=dueDate', path: `/v1/tasks?sort=dueDate&limit=20&cursor=${dueCursor}`, headers: auth }
  ]
}

/** The ETag the record of the GET-one workloads has now, for its 304 workload. */
export async function recordEtag (base: string, auth: Record<string, string>): Promise<string> {
  return (await fetch(`${base}${RECORD_PATH}`, { headers: auth })).headers.get('etag')!
}

/** GET one task: with a JWT, with an API key when one is given, and revalidated with the ETag it has (`etag`), answered 304. */
export function recordWorkloads (auth: Record<string, string>, etag: string, apiKey?: string): Workload[] {
  return [
    { name: 'GET one task (JWT)', path: RECORD_PATH, headers: auth },
    ...apiKey === undefined ? [] : [{ name: 'GET one task (API key)', path: RECORD_PATH, headers: { authorization: `Bearer ${apiKey}` } }],
    { name: 'GET one task, 304 revalidation', path: RECORD_PATH, headers: { ...auth, 'if-none-match': etag }, expect: 304 }
  ]
}

/**
 * The reads not measured at 1M: a list as a browser reads it, a deep page by
 * number, and pages and records that differ from request to request. Every
 * other read workload asks all its connections for one page or one record,
 * which both databases then read once for many requests (remembered, or on
 * PostgreSQL shared by a turn's requests): the last two show what a read
 * afresh costs, one of `tasks` tasks.
 */
export function pageWorkloads (auth: Record<string, string>, tasks: number): Workload[] {
  return [
    // What a browser sends: every list it reads is compressed (content-coding.ts).
    { name: 'GET list of 20, browser (br)', path: '/v1/tasks?limit=20', headers: { ...auth, 'accept-encoding': 'gzip, deflate, br' } },
    { name: 'GET deep page (page 4000)', path: '/v1/tasks?page=4000&limit=20', headers: auth },
    { name: 'GET a random project\'s tasks by cursor', path: '/v1/projects/{id}/tasks?limit=20&cursor=', ids: PROJECTS, headers: auth },
    { name: 'GET a random task', path: '/v1/tasks/{id}', ids: tasks, headers: auth }
  ]
}

/** A durable create, the same under a new Idempotency-Key each, and an edit of a random one of `tasks` tasks. */
export function writeWorkloads (auth: Record<string, string>, tasks: number): Workload[] {
  return [
    { name: 'POST a task (durable, FULL)', method: 'POST', path: '/v1/tasks', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"bench","projectId":1}', expect: 201 },
    { name: 'POST a task, Idempotency-Key', method: 'POST', path: '/v1/tasks', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"bench","projectId":1}', expect: 201, freshHeader: 'idempotency-key' },
    { name: 'PATCH a task with If-Match', method: 'PATCH', path: '/v1/tasks/{id}', ids: tasks, headers: { ...auth, 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: '{"priority":2}' }
  ]
}

/**
 * The write workloads again, while a webhook subscription is active: each
 * write then adds its event to the outbox in its transaction. The
 * subscription (SUBSCRIPTION, added straight into the database) wants only
 * an event these workloads never make, so the dispatcher fans every event
 * out to no delivery, and no request leaves the machine.
 */
export function subscribedWriteWorkloads (auth: Record<string, string>, tasks: number): Workload[] {
  return writeWorkloads(auth, tasks).map(workload => ({ ...workload, name: `${workload.name}, subscribed` }))
}

export const SUBSCRIPTION = `insert into resourcery_webhooks (url, events, secret, "createdAt")
  values ('https://hooks.example.com/bench', '["projects.deleted"]', 'whsec_bench', '2026-01-01T00:00:00.000Z')`

/** What the workloads need of a running service: where it is, its cursor key, and an API key when it has one. */
export interface Target { readonly base: string, readonly cursors: CursorCodec, readonly apiKey?: string }

/** Every workload the benches measure on `tasks` tasks, in their order: the 304 one with its record's ETag now. */
export async function allWorkloads ({ base, cursors, apiKey }: Target, auth: Record<string, string>, tasks: number): Promise<Workload[]> {
  return [
    ...recordWorkloads(auth, await recordEtag(base, auth), apiKey),
    ...listWorkloads(cursors, auth),
    ...pageWorkloads(auth, tasks),
    ...writeWorkloads(auth, tasks)
  ]
}

/** A run's results by workload, and the table printed of them, filled by `record`. */
export interface Results {
  readonly results: Record<string, Figures>
  readonly table: string[]
  record (name: string, figures: Figures): void
}

export function resultsTable (): Results {
  const byName: Record<string, Figures> = {}
  const table: string[] = []
  return {
    results: byName,
    table,
    record (name, figures) {
      byName[name] = rounded(figures)
      table.push(tableRow(name, figures))
    }
  }
}

/** `value` to `digits` places, as a number. */
const places = (value: number, digits: number): number => Number(value.toFixed(digits))

/** The figures as the result file keeps them: ratios to three places, CPU (all and kernel) to a tenth of a µs, the core's sleeps whole. */
function rounded (figures: Figures): Figures {
  return {
    ...figures,
    runRatios: figures.runRatios?.map(ratio => places(ratio, 3)),
    ratio: places(figures.ratio, 3),
    cpuRatio: places(figures.cpuRatio, 3),
    serverBusy: places(figures.serverBusy, 2),
    generatorBusy: places(figures.generatorBusy, 2),
    coreIdle: places(figures.coreIdle, 2),
    coreSleeps: figures.coreSleeps === undefined ? undefined : { perSecond: places(figures.coreSleeps.perSecond, 0), meanMicros: places(figures.coreSleeps.meanMicros, 0) },
    steal: places(figures.steal, 3),
    cpuUs: places(figures.cpuUs, 1),
    kernelUs: places(figures.kernelUs, 1)
  }
}

const percent = (share: number, digits = 0): string => `${(100 * share).toFixed(digits).padStart(digits === 0 ? 3 : 4)}%`

/** One line of the printed table. */
function tableRow (name: string, figures: Figures): string {
  const runs = figures.runRatios ?? []
  return [
    `${name.padEnd(34)} ${figures.rps.toFixed(0).padStart(8)} req/s`,
    `ratio ${figures.ratio.toFixed(3)} (baseline ${figures.baselineRps.toFixed(0)})`,
    `p50 ${String(figures.p50).padStart(4)} ms`,
    `p99 ${String(figures.p99).padStart(4)} ms`,
    `rss ${figures.rssMb.toFixed(1).padStart(5)} MB`,
    `server busy ${percent(figures.serverBusy)}`,
    `generator busy ${percent(figures.generatorBusy)}`,
    `core idle ${percent(figures.coreIdle)}${figures.coreSleeps === undefined ? '' : ` (${figures.coreSleeps.perSecond.toFixed(0).padStart(5)} sleeps/s of ${figures.coreSleeps.meanMicros.toFixed(0).padStart(4)} µs)`}`,
    `steal ${percent(figures.steal, 1)}`,
    `${figures.cpuUs.toFixed(0).padStart(4)} µs/req (kernel ${figures.kernelUs.toFixed(0).padStart(3)})`,
    `cpu ratio ${figures.cpuRatio.toFixed(3)}`,
    ...runs.length > 1 ? [`runs ${runs.map(ratio => ratio.toFixed(3)).join(' ')}`] : [],
    ...figures.errors > 0 ? [`errors ${figures.errors}`] : []
  ].join('  ')
}

/** Writes a run's results to bench/results/, named by the time and `kind`; returns the file's path. */
export function writeResults (kind: string, body: Record<string, unknown>): string {
  mkdirSync('bench/results', { recursive: true })
  const out = `bench/results/${new Date().toISOString().replace(/[:.]/g, '-')}${kind}${quick ? '-quick' : ''}.json`
  writeFileSync(out, `${JSON.stringify({ quick, durationSeconds: DURATION, runs: RUNS, connections: CONNECTIONS, pinned, ...body }, null, 2)}\n`)
  return out
}
