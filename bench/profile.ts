/**
 * npm run bench:profile -- <workload> [seconds] [--alloc]: where one
 * workload's server CPU goes (or with --alloc, its memory). The bench says
 * how fast; this says why, before anything is optimised. It seeds the
 * bench's 100k file, starts the service as the bench does (pinned,
 * `npm start`'s flags) under `--cpu-prof`, loads it with the
 * bench workload whose name contains <workload> (case-insensitive: `JWT`,
 * `304`, `filtered`, `PATCH`…) for `seconds` (10) after a warm-up, stops it,
 * and prints req/s, CPU per request, the functions most samples landed in,
 * and the engine's own functions (dist/src) by inclusive time, counting only
 * the samples of the measured load. The profile file is kept for Chrome
 * DevTools. The profiler costs the server some speed: read its shares, and
 * take speed from `npm run bench`.
 *
 * With --alloc it samples the server's allocations instead
 * (allocation-sampler.ts), the freed ones included, over the measured load
 * only, and prints the bytes allocated per request, the garbage collections
 * they brought and their time per request, and the same two rankings in
 * bytes per request: a request's garbage is what makes the collector run.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { collectSamples, sampledProcess, startSampling } from './allocation-control.js'
import { asWeightedSamples } from './allocation-profile.js'
import type { AllocationRecord, Collections } from './allocation-sampler.js'
import { inclusiveTimes, selfTimes, type CpuProfile, type Share } from './cpu-profile.js'
import { pinLoadGenerator, slice, stop, summed, type Server, type Slice, type Workload } from './measure.js'
import { PROJECTS, seed } from './seed.js'
import { allWorkloads, benchAuth } from './service.js'
import { chosenWorkload, serveSqlite, target } from './sqlite-service.js'

pinLoadGenerator()

const WARM_UP_SECONDS = 3
const TOP = 30
const PORT = 3907
const ENGINE = (name: string): boolean => name.includes(' dist/src/')
const ENGINE_HEADING = 'a Fastify hook includes the hooks and the sending after it, which it calls'

/** How one kind of profile is taken of the served workload, and told. */
interface Profiler {
  readonly nodeFlags: readonly string[]
  readonly env: Record<string, string>
  /** Just before the measured load. */
  begin (server: Server): Promise<void>
  /** Just after it, the server still running. */
  end (server: Server): Promise<void>
  /** Once the server has stopped: what to print of `measured`, the load. */
  report (workload: Workload, measured: Slice): string[]
}

const percent = ({ name, share }: Share): string => `${(100 * share).toFixed(2).padStart(6)} %  ${name}`

/** The server under `node --cpu-prof`, its samples counted from the measured load's start. */
function cpuProfiler (dir: string): Profiler {
  let from = 0
  return {
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    env: {},
    async begin () { from = Number(process.hrtime.bigint() / 1000n) },
    async end () {},
    report (workload, measured) {
      const file = readdirSync(dir).find(name => name.endsWith('.cpuprofile'))
      if (file === undefined) throw new Error(`the server left no profile in ${dir}`)
      const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
      const figures = summed([measured])
      return [
        `${workload.name}, under the profiler: ${figures.rps.toFixed(0)} req/s, ${figures.cpuUs.toFixed(0)} µs CPU per request (kernel ${figures.kernelUs.toFixed(0)})${figures.errors > 0 ? `, ${figures.errors} errors` : ''}`,
        '', 'self time (where the samples landed):', ...selfTimes(profile, from, TOP).map(percent),
        '', `inclusive time of the engine (dist/src; ${ENGINE_HEADING}):`, ...inclusiveTimes(profile, from, ENGINE, TOP).map(percent),
        '', `profile: ${join(dir, file)} (Chrome DevTools, Performance: load profile)`, ''
      ]
    }
  }
}

/** The server with allocation-sampler.ts preloaded, sampling from just before the measured load to just after it. */
function allocationProfiler (dir: string): Profiler {
  const recordFile = join(dir, 'allocations.json')
  let record: AllocationRecord | undefined
  const told = ([kind, { count, ms }]: [string, Collections]): string => `${count} ${kind}${count === 1 ? '' : 's'} (${ms.toFixed(0)} ms)`
  return {
    ...sampledProcess(recordFile),
    // The load begins once the sampler samples: none of its requests goes unsampled.
    async begin (server) { await startSampling(server.child, recordFile) },
    async end (server) { record = await collectSamples(server.child, recordFile) },
    report (workload, measured) {
      if (record === undefined) throw new Error('no allocations were collected')
      const { profile: heapProfile, seconds, collections } = record
      const { profile, bytes } = asWeightedSamples(heapProfile.head)
      const saved = join(dir, 'allocations.heapprofile')
      writeFileSync(saved, JSON.stringify(heapProfile))
      const requests = Math.max(1, measured.requests)
      const figures = summed([measured])
      const perRequest = ({ name, share }: Share): string => `${(share * bytes / requests).toFixed(0).padStart(7)} B  ${name}`
      return [
        `${workload.name}, under the allocation sampler: ${figures.rps.toFixed(0)} req/s${figures.errors > 0 ? `, ${figures.errors} errors` : ''}`,
        `allocated: ${(bytes / requests / 1024).toFixed(1)} KB per request`,
        `garbage collection in the ${seconds.toFixed(1)} s sampled: ${Object.entries(collections).map(told).join(', ') || 'none'};` +
          ` ${(1000 * Object.values(collections).reduce((ms, kind) => ms + kind.ms, 0) / requests).toFixed(1)} µs a request`,
        '', 'bytes per request by the function that allocated them:', ...selfTimes(profile, 0, TOP).map(perRequest),
        '', `bytes per request allocated in or below the engine's functions (dist/src; ${ENGINE_HEADING}):`, ...inclusiveTimes(profile, 0, ENGINE, TOP).map(perRequest),
        '', `profile: ${saved} (Chrome DevTools, Memory: load profile)`, ''
      ]
    }
  }
}

async function main (): Promise<void> {
  const [wanted, secondsArgument] = process.argv.slice(2).filter(argument => !argument.startsWith('--'))
  const seconds = Number(secondsArgument ?? 10)
  if (wanted === undefined || !(seconds > 0)) throw new Error('usage: npm run bench:profile -- <workload> [seconds] [--alloc]')
  const dir = mkdtempSync(join(tmpdir(), 'resourcery-profile-'))
  const profiler = process.argv.includes('--alloc') ? allocationProfiler(dir) : cpuProfiler(dir)
  process.stderr.write('seeding 100k tasks…\n')
  await seed(join(dir, '100k.db'), PROJECTS, 100_000)
  const service = await serveSqlite(join(dir, '100k.db'), PORT, dir, { nodeFlags: profiler.nodeFlags, env: profiler.env })
  let workload: Workload
  let measured: Slice
  try {
    workload = chosenWorkload(await allWorkloads(target(service), benchAuth(), 100_000), wanted)
    process.stderr.write(`${workload.name}: ${WARM_UP_SECONDS} s warm-up, ${seconds} s profiled…\n`)
    await slice(service.server, workload, WARM_UP_SECONDS)
    await profiler.begin(service.server)
    measured = await slice(service.server, workload, seconds)
    await profiler.end(service.server)
  } catch (error) {
    await stop(service.server)
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  await stop(service.server)
  // The profile stays; the seeded file (30 MB and its WAL) goes.
  for (const name of readdirSync(dir).filter(name => name.startsWith('100k.db'))) rmSync(join(dir, name))
  process.stdout.write(profiler.report(workload, measured).join('\n'))
}

// A wrong argument is told as a usage message, not a stack trace.
await main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 2
})
