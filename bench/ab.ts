/**
 * npm run bench:ab -- <workload> <git-ref> [rounds] [seconds] [settings]:
 * whether a change made one bench workload faster. Each optimisation is to be recorded
 * with its before and after; on this shared machine two runs of one build
 * differ by up to a third, so one run of each proves nothing, and a
 * hand-made comparison script was written again in each session that needed
 * one.
 *
 * It builds <git-ref> (a commit, a branch, HEAD~1) in a temporary worktree
 * with this checkout's node_modules, seeds the bench's 100k file once, and
 * serves that build ("before") and this one ("after") side by side, each on
 * a copy of the seeded file of its own (a write workload adds rows), pinned
 * as the bench pins it and warmed up. It then loads them with the workload
 * (named as for bench:profile) in turns of a few seconds: after then before,
 * before then after, and so on. The host's speed drifts by a third over tens
 * of seconds (a shared machine): runs of 8 s, each on a server started
 * afresh, gave pairs of one build from 0.7 to 1.27, where short turns
 * between two running servers put the drift on both alike. It prints every
 * run, then each side's median, and the median, lowest and highest of the
 * ratios within a pair of runs (comparison.ts).
 *
 * `.` in place of a ref serves this build on both sides, and each side may
 * be given environment variables and Node flags of its own (ab-arguments.ts):
 * two settings of one build compared without a worktree, and with none an
 * A/A run, which tells how far the machine's noise alone moves the pairs.
 */
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { abArguments, settingsLabel, THIS_BUILD, type SideSettings } from './ab-arguments.js'
import { comparison, type Comparison } from './comparison.js'
import { dist, pinLoadGenerator, slice, stop, summed, type Server, type Workload } from './measure.js'
import { PROJECTS, seed } from './seed.js'
import { allWorkloads, benchAuth } from './service.js'
import { chosenWorkload, serveSqlite, target } from './sqlite-service.js'

pinLoadGenerator()

const WARM_UP_SECONDS = 3
const PORT = 3908
const TASKS = 100_000
const root = join(dist, '..')
/** The servers started, which an interruption stops. */
const serving: Server[] = []

/** One side's runs; `build` gives its dist/ folder, made on first use, and `settings` what its server gets besides. */
interface Side { readonly label: string, readonly build: () => string, readonly settings: SideSettings, readonly rps: number[], readonly cpuUs: number[] }
interface Served { readonly side: Side, readonly server: Server, readonly workload: Workload }

/** Runs git in this checkout; its failure is an error that says what git said. */
function git (...args: string[]): string {
  const result = spawnSync('git', args, { cwd: root, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr.trim()}`)
  return result.stdout.trim()
}

/** `ref`'s dist/ folder, compiled in a worktree under `dir`; its output is shown, as a build's is. */
function buildRef (ref: string, dir: string): string {
  const tree = join(dir, 'ref')
  git('worktree', 'add', '--detach', tree, ref)
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'))
  process.stderr.write(`building ${ref}…\n`)
  spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', tree], { stdio: 'inherit' })
  const build = join(tree, 'dist')
  if (!existsSync(join(build, 'src/server.js'))) throw new Error(`${ref} did not build: no dist/src/server.js`)
  return build
}

/** A figure rounded to a whole number, with thousands separated. */
const whole = (value: number): string => value.toLocaleString('en-US', { maximumFractionDigits: 0 })
const told = (name: string, { before, after, ratio, lowestPair, highestPair }: Comparison, unit: string): string =>
  `${name}: before ${whole(before)} ${unit}, after ${whole(after)} ${unit} (medians); after / before ${ratio.toFixed(3)}, the median of the pairs (${lowestPair.toFixed(3)} to ${highestPair.toFixed(3)})`

/** A build's service on a copy of the seeded file of its own, on a port of its own, and the workload it is loaded with. */
async function serve (side: Side, seeded: string, dir: string, port: number, wanted: string): Promise<Served> {
  const data = join(dir, String(port))
  mkdirSync(data)
  const file = join(data, 'bench.db')
  copyFileSync(seeded, file)
  const service = await serveSqlite(file, port, data, { build: side.build(), env: side.settings.env, nodeFlags: side.settings.nodeFlags })
  serving.push(service.server)
  // The 304 workload's ETag is the seeded record's, the same in every copy.
  const workload = chosenWorkload(await allWorkloads(target(service), benchAuth(), TASKS), wanted)
  await slice(service.server, workload, WARM_UP_SECONDS)
  return { side, server: service.server, workload }
}

async function main (dir: string): Promise<void> {
  const { workload: wanted, ref, rounds, seconds, before: beforeSettings, after: afterSettings } = abArguments(process.argv.slice(2))
  const commit = ref === THIS_BUILD ? '' : spawnSync('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: root, encoding: 'utf8' }).stdout.trim()
  if (ref !== THIS_BUILD && commit === '') throw new Error(`"${ref}" names no commit of this repository`)
  process.stderr.write('seeding 100k tasks…\n')
  const seeded = join(dir, 'seeded.db')
  await seed(seeded, PROJECTS, TASKS)
  let refBuild: string | undefined
  const labelled = (build: string, settings: SideSettings): string => [build, settingsLabel(settings)].filter(Boolean).join(', ')
  const after: Side = { label: `after (${labelled('this build', afterSettings)})`, build: () => dist, settings: afterSettings, rps: [], cpuUs: [] }
  const before: Side = {
    label: `before (${labelled(ref === THIS_BUILD ? 'this build' : `${ref}, ${commit.slice(0, 9)}`, beforeSettings)})`,
    build: () => ref === THIS_BUILD ? dist : (refBuild ??= buildRef(ref, dir)),
    settings: beforeSettings,
    rps: [],
    cpuUs: []
  }
  // This build first: a workload name that matches nothing fails before the other build is made.
  const afterRun = await serve(after, seeded, dir, PORT, wanted)
  const beforeRun = await serve(before, seeded, dir, PORT + 1, wanted)
  process.stderr.write(`${afterRun.workload.name}: ${rounds} rounds of ${seconds} s on each side, in turns, after ${WARM_UP_SECONDS} s of warm-up\n`)
  for (let round = 0; round < rounds; round++) {
    for (const { side, server, workload } of round % 2 === 0 ? [afterRun, beforeRun] : [beforeRun, afterRun]) {
      const measured = summed([await slice(server, workload, seconds)])
      side.rps.push(measured.rps)
      side.cpuUs.push(measured.cpuUs)
      process.stdout.write(`round ${String(round + 1).padStart(2)}  ${side.label.padEnd(32)} ${whole(measured.rps).padStart(7)} req/s  ${measured.cpuUs.toFixed(0).padStart(4)} µs/req  p99 ${measured.p99} ms  rss ${measured.rssMb.toFixed(1)} MB${measured.errors > 0 ? `  ${measured.errors} errors` : ''}\n`)
    }
  }
  process.stdout.write([
    '',
    told('throughput', comparison(before.rps, after.rps), 'req/s'),
    told('server CPU per request', comparison(before.cpuUs, after.cpuUs), 'µs'),
    ''
  ].join('\n'))
}

const dir = mkdtempSync(join(tmpdir(), 'resourcery-ab-'))
/** Removes the worktree (else git keeps it registered, and the ref checked out there) and the temporary files. */
function cleanUp (): void {
  if (existsSync(join(dir, 'ref'))) git('worktree', 'remove', '--force', join(dir, 'ref'))
  rmSync(dir, { recursive: true, force: true })
}
// Ctrl-C or a kill: the run stops its server and cleans up before it goes.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`${signal}: stopped, removing ${dir}\n`)
    for (const server of serving) server.child.kill('SIGKILL')
    cleanUp()
    process.exit(130)
  })
}
try {
  await main(dir)
} catch (error: unknown) {
  // A wrong argument is told as a usage message, not a stack trace.
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 2
} finally {
  for (const server of serving.splice(0)) await stop(server)
  cleanUp()
}
