/**
 * How the bench measures: starts a server pinned to CPU 0 (when taskset
 * exists), loads it with autocannon from this process, and reports each
 * workload as the median of its runs, each run taken in turns with baseline
 * load, with the server's CPU per answer and its peak RSS.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { hostTicksFrom, NO_TICKS, plus, share, type HostTicks } from './host-cpu.js'

export const quick = process.argv.includes('--quick')
export const DURATION = quick ? 3 : 10
export const RUNS = quick ? 1 : 3
/** Seconds of load before each measured workload: the JIT settles on the workload's hot paths (1 s left the first one measurably low). */
const WARM_UP = quick ? 1 : 3
export const CONNECTIONS = 50
export const pinned = spawnSync('which', ['taskset']).status === 0
/** Seconds of baseline load in each run of a workload, which is compared with it. */
const BASELINE_SECONDS = quick ? 3 : 5
/** Stretches each run's workload and baseline load are cut into, taken in turn (see measure). */
const SLICES = quick ? 3 : 5

export const dist = fileURLToPath(new URL('..', import.meta.url))

/** Runs this script again pinned to CPU 1, the servers having CPU 0 (when taskset exists), and exits with it. */
export function pinLoadGenerator (): void {
  if (!pinned || process.env.RESOURCERY_BENCH_PINNED === '1') return
  const child = spawnSync('taskset', ['-c', '1', process.execPath, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, RESOURCERY_BENCH_PINNED: '1' } })
  process.exit(child.status ?? 1)
}
export interface Server { child: ChildProcess, base: string }

export async function start (args: string[], env: Record<string, string>, port: number): Promise<Server> {
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

/** Asks a server to stop and waits until it has (SIGKILL after 10 s): whatever it still writes on its way out is done. */
export async function stop ({ child }: Server): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

/** CPU seconds the process has used so far, in all and in the kernel, from /proc (clock ticks of 1/100 s). */
function cpuSeconds (pid: number): { total: number, kernel: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  // After the command name: field 14 (utime) and 15 (stime) of proc(5) are at 11 and 12.
  const kernel = Number(fields[12]) / 100
  return { total: Number(fields[11]) / 100 + kernel, kernel }
}

function rssMb (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

export interface Workload {
  name: string
  method?: 'GET' | 'POST' | 'PATCH'
  path: string
  headers?: Record<string, string>
  body?: string
  expect?: number
  /** `{id}` in the path becomes a random id up to this, per request (clients editing different records). */
  ids?: number
  /** A header sent with a new random value on every request: an Idempotency-Key, as a client makes one per create. */
  freshHeader?: string
}
export interface Figures {
  rps: number
  /** rps over the baseline's req/s measured in turns with this run: the machine's speed drifts, so each run has its own reference. */
  ratio: number
  baselineRps: number
  p50: number
  p99: number
  rssMb: number
  /** Share of its CPU the server used during the run: well under 1, the load generator was the limit, not the server. */
  serverBusy: number
  /**
   * Share of its CPU the load generator (autocannon, in this process) used.
   * Near 1 while the server is not, the generator was the limit: its own
   * parsing of the answers (a JavaScript HTTP parser, header by header) then
   * decides the req/s, and an answer with the contract's headers (about 25)
   * costs it more than the hello's 5: 24 against 18 µs a response in one run.
   */
  generatorBusy: number
  /**
   * Share of the time the server's core sat idle. With the server under 100 %
   * busy, idle says it was waiting for requests: for the generator, or for
   * the wake-ups that carry them between the cores (under a hypervisor, each
   * wake of a sleeping virtual CPU is an exit to the host).
   */
  coreIdle: number
  /**
   * How that idle time came: the times a second the server's core went to
   * sleep, and how long a sleep lasted. Thousands of short sleeps a second
   * are time lost between requests (each wake-up, under a hypervisor, is the
   * host's to make); a few long ones, a server with nothing to do. Absent
   * where cpuidle cannot be read (host-cpu.ts).
   */
  coreSleeps?: { perSecond: number, meanMicros: number }
  /** Share of the machine's CPU time the hypervisor gave to other guests: the server denied its core, not waiting. */
  steal: number
  /** Server CPU per answer, in µs: what a request costs whoever is the bottleneck. */
  cpuUs: number
  /**
   * The part of cpuUs spent in the kernel (system calls, and on loopback the
   * load generator's side of TCP and its wake-up, which the sender runs): what
   * no change to the server's JavaScript can take away.
   */
  kernelUs: number
  /** The baseline's CPU per answer over this one's: the ratio the server alone would reach if both were CPU-bound. */
  cpuRatio: number
  errors: number
  /** Every run's ratio, in the order taken, beside the median run's figures above: how far the runs spread. */
  runRatios?: readonly number[]
}

export const HELLO: Workload = { name: 'baseline', path: '/hello' }

/** What changes from request to request: a random id in the path, a fresh header value. */
export function perRequest ({ path, ids, freshHeader }: Workload): ((request: autocannon.Request) => autocannon.Request) | undefined {
  if (ids === undefined && freshHeader === undefined) return undefined
  return request => ({
    ...request,
    ...(ids === undefined ? {} : { path: path.replace('{id}', String(1 + Math.floor(Math.random() * ids))) }),
    ...(freshHeader === undefined ? {} : { headers: { ...request.headers, [freshHeader]: randomUUID() } })
  })
}

function load (server: Server, workload: Workload, duration: number): ReturnType<typeof autocannon> {
  const setupRequest = perRequest(workload)
  return autocannon({
    url: server.base + workload.path,
    connections: CONNECTIONS,
    duration,
    method: workload.method ?? 'GET',
    headers: workload.headers,
    body: workload.body,
    ...(setupRequest === undefined ? {} : { requests: [{ setupRequest }] })
  })
}

/** One stretch of load: its raw totals, so that the stretches of a run add up. */
export interface Slice { requests: number, seconds: number, cpu: number, kernelCpu: number, generatorCpu: number, host: HostTicks, p50: number, p99: number, rssMb: number, errors: number }

/** CPU seconds this process, the load generator, has used so far. */
function generatorSeconds (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1e6
}

export async function slice (server: Server, workload: Workload, duration: number): Promise<Slice> {
  const pid = server.child.pid!
  let peak = rssMb(pid)
  const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)) }, 250)
  const cpuBefore = cpuSeconds(pid)
  const generatorBefore = generatorSeconds()
  const hostTicks = hostTicksFrom(pinned)
  const started = process.hrtime.bigint()
  const result = await load(server, workload, duration)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const generatorCpu = generatorSeconds() - generatorBefore
  const host = hostTicks()
  const cpuAfter = cpuSeconds(pid)
  clearInterval(sampler)
  // Every answer must have the expected status; anything else is counted as an error.
  const wrong = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => Number(code) !== (workload.expect ?? 200)).reduce((n, [, stats]) => n + (stats.count ?? 0), 0)
  return { requests: result.requests.total, seconds, cpu: cpuAfter.total - cpuBefore.total, kernelCpu: cpuAfter.kernel - cpuBefore.kernel, generatorCpu, host, p50: result.latency.p50, p99: result.latency.p99, rssMb: tenths(peak), errors: result.errors + result.timeouts + wrong }
}

/** To a tenth: RSS is judged against its budget unrounded, so 150.4 MB is over 150, not "150". */
const tenths = (value: number): number => Math.round(value * 10) / 10

/** The median (of an even count, the upper of the middle two). */
export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** A run's figures from its slices: rates over their sums; latency the median slice's, RSS the highest. */
export function summed (slices: readonly Slice[]): Omit<Figures, 'ratio' | 'baselineRps' | 'cpuRatio'> {
  const requests = slices.reduce((n, part) => n + part.requests, 0)
  const seconds = slices.reduce((n, part) => n + part.seconds, 0)
  const cpu = slices.reduce((n, part) => n + part.cpu, 0)
  const kernelCpu = slices.reduce((n, part) => n + part.kernelCpu, 0)
  const generatorCpu = slices.reduce((n, part) => n + part.generatorCpu, 0)
  const host = slices.reduce((sum, part) => plus(sum, part.host), NO_TICKS)
  return {
    rps: requests / seconds,
    p50: median(slices.map(part => part.p50)),
    p99: median(slices.map(part => part.p99)),
    rssMb: Math.max(...slices.map(part => part.rssMb)),
    serverBusy: cpu / seconds,
    generatorBusy: generatorCpu / seconds,
    coreIdle: share(host.serverCore.idle, host.serverCore.total),
    coreSleeps: host.serverSleeps === undefined
      ? undefined
      : { perSecond: host.serverSleeps.entered / seconds, meanMicros: host.serverSleeps.micros / Math.max(1, host.serverSleeps.entered) },
    steal: share(host.machine.steal, host.machine.total),
    cpuUs: cpu * 1e6 / Math.max(1, requests),
    kernelUs: kernelCpu * 1e6 / Math.max(1, requests),
    errors: slices.reduce((n, part) => n + part.errors, 0)
  }
}

/** One server under one workload: what a run measures, in turns with the baseline and the run's other subjects. */
export type Subject = readonly [Server, Workload]

/**
 * RUNS runs of each subject. A run alternates SLICES stretches of baseline load
 * with SLICES of each subject, so all of them see the same machine: on a shared
 * VM the baseline alone swung from 13,000 to 34,000 req/s within minutes, and a
 * baseline taken once before a 10 s run put that drift into the ratio. Returns
 * each run's figures, subject by subject (runs[i][s] is run i of subject s).
 */
async function runsInTurns (subjects: readonly Subject[], baseline: Server): Promise<Figures[][]> {
  const runs: Figures[][] = []
  for (const [server, workload] of subjects) await load(server, workload, WARM_UP)
  for (let i = 0; i < RUNS; i++) {
    const references: Slice[] = []
    const measured: Slice[][] = subjects.map(() => [])
    for (let part = 0; part < SLICES; part++) {
      if (subjects.some(([server]) => server !== baseline)) references.push(await slice(baseline, HELLO, BASELINE_SECONDS / SLICES))
      for (const [s, [server, workload]] of subjects.entries()) measured[s]!.push(await slice(server, workload, DURATION / SLICES))
    }
    runs.push(measured.map(slices => {
      const figures = summed(slices)
      const reference = references.length === 0 ? figures : summed(references)
      return { ...figures, ratio: figures.rps / reference.rps, baselineRps: reference.rps, cpuRatio: reference.cpuUs / figures.cpuUs }
    }))
  }
  return runs
}

/** The run whose ratio is the median (of an even count, the upper of the middle two), with every run's ratio. */
export function medianRun (runs: readonly Figures[]): Figures {
  const median = [...runs].sort((a, b) => a.ratio - b.ratio || a.rps - b.rps)[Math.floor(runs.length / 2)]!
  return { ...median, runRatios: runs.map(run => run.ratio) }
}

/** A workload's figures: the median of RUNS runs, each taken in turns with baseline load. */
export async function measure (server: Server, workload: Workload, baseline: Server): Promise<Figures> {
  return (await measureTogether([[server, workload]], baseline))[0]!
}

/**
 * Several subjects measured in the same runs, slice after slice, each
 * reported as measure reports it (in subjects' order). Within a run their
 * ratios share a baseline and compare with one another: measured a workload
 * at a time, GET one with an API key read 0.05 below GET one with a JWT in
 * three full runs, while the two cost the same CPU per request in turns
 * (40–50 µs each on 12-07); the hello had run at 26,000 req/s in the one's
 * turns and at 35,000 in the other's. Each subject's median run is still its
 * own, so two lines may stand on different runs: their `runRatios` show each.
 */
export async function measureTogether (subjects: readonly Subject[], baseline: Server): Promise<Figures[]> {
  const runs = await runsInTurns(subjects, baseline)
  return subjects.map((_, s) => medianRun(runs.map(run => run[s]!)))
}

/** Two subjects measured in the same turns, and how the second's throughput compares with the first's. */
export interface Pair {
  readonly first: Figures
  readonly second: Figures
  readonly secondOverFirst: number
  /** Every run's figures of the two, taken in the same turns: for a comparison of the two other than req/s, run by run. */
  readonly runs: ReadonlyArray<readonly [Figures, Figures]>
}

/**
 * Two subjects measured in the same runs, stretch after stretch: each gets
 * its figures as measure gives them, and the second's req/s over the first's
 * is the median of the runs' own (each run's two loads seconds apart). The
 * same workload on 1M tasks against 100k is compared so: with each measured
 * separately, its growth was the quotient of two ratios over two baselines,
 * and one baseline's swing alone (22,500 against 32,400 req/s in one run,
 * while the service held 8,900 and 8,500) read as 0.66.
 */
export async function measurePair (first: Subject, second: Subject, baseline: Server): Promise<Pair> {
  const runs = await runsInTurns([first, second], baseline)
  return {
    first: medianRun(runs.map(([figures]) => figures!)),
    second: medianRun(runs.map(([, figures]) => figures!)),
    secondOverFirst: median(runs.map(([a, b]) => b!.rps / a!.rps)),
    runs: runs.map(([a, b]) => [a!, b!] as const)
  }
}
