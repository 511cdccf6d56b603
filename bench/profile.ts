/**
 * npm run bench:profile -- <workload> [seconds]: where one workload's server
 * CPU goes. The bench says how fast; this says why, before anything is
 * optimised. It seeds the bench's 100k file, starts the service as the bench
 * does (pinned, `npm start`'s flags) under `--cpu-prof`, loads it with the
 * bench workload whose name contains <workload> (case-insensitive: `JWT`,
 * `304`, `filtered`, `PATCH`…) for `seconds` (10) after a warm-up, stops it,
 * and prints req/s, CPU per request, the functions most samples landed in,
 * and the engine's own functions (dist/src) by inclusive time, counting only
 * the samples of the measured load. The profile file is kept for Chrome
 * DevTools. The profiler costs the server some speed: read its shares, and
 * take speed from `npm run bench`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inclusiveTimes, selfTimes, type CpuProfile, type Share } from './cpu-profile.js'
import { pinLoadGenerator, slice, stop, summed, type Workload } from './measure.js'
import { seed } from './seed.js'
import { allWorkloads, benchAuth } from './service.js'
import { chosenWorkload, serveSqlite, target } from './sqlite-service.js'

pinLoadGenerator()

const WARM_UP_SECONDS = 3
const TOP = 30
const PORT = 3907

const percent = ({ name, share }: Share): string => `${(100 * share).toFixed(2).padStart(6)} %  ${name}`

async function main (): Promise<void> {
  const [wanted, secondsArgument] = process.argv.slice(2).filter(argument => !argument.startsWith('--'))
  const seconds = Number(secondsArgument ?? 10)
  if (wanted === undefined || !(seconds > 0)) throw new Error('usage: npm run bench:profile -- <workload> [seconds]')
  const dir = mkdtempSync(join(tmpdir(), 'resourcery-profile-'))
  process.stderr.write('seeding 100k tasks…\n')
  await seed(join(dir, '100k.db'), 10_000, 100_000)
  const service = await serveSqlite(join(dir, '100k.db'), PORT, dir, { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`] })
  let workload: Workload
  try {
    workload = chosenWorkload(await allWorkloads(target(service), benchAuth(), 100_000), wanted)
  } catch (error) {
    await stop(service.server)
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  process.stderr.write(`${workload.name}: ${WARM_UP_SECONDS} s warm-up, ${seconds} s profiled…\n`)
  await slice(service.server, workload, WARM_UP_SECONDS)
  const from = Number(process.hrtime.bigint() / 1000n)
  const measured = summed([await slice(service.server, workload, seconds)])
  await stop(service.server)
  // The profile stays; the seeded file (30 MB and its WAL) goes.
  for (const name of readdirSync(dir).filter(name => name.startsWith('100k.db'))) rmSync(join(dir, name))
  const file = readdirSync(dir).find(name => name.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error(`the server left no profile in ${dir}`)
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
  process.stdout.write([
    `${workload.name}, under the profiler: ${measured.rps.toFixed(0)} req/s, ${measured.cpuUs.toFixed(0)} µs CPU per request (kernel ${measured.kernelUs.toFixed(0)})${measured.errors > 0 ? `, ${measured.errors} errors` : ''}`,
    '', 'self time (where the samples landed):', ...selfTimes(profile, from, TOP).map(percent),
    '', 'inclusive time of the engine (dist/src; a Fastify hook includes the hooks and the sending after it, which it calls):', ...inclusiveTimes(profile, from, name => name.includes(' dist/src/'), TOP).map(percent),
    '', `profile: ${join(dir, file)} (Chrome DevTools, Performance: load profile)`, ''
  ].join('\n'))
}

// A wrong argument is told as a usage message, not a stack trace.
await main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 2
})
