/**
 * npm run bench [-- --quick]: the service's throughput and latency with the
 * full production stack, as ratios to a bare Fastify baseline measured in the
 * same run on the same machine, in turns with each measured run (a shared
 * machine's speed drifts by tens of percent within minutes; a ratio against a
 * baseline taken at the start mixed that drift into every figure). The
 * 100k and 1M services run side by side, and each scaled workload is measured
 * on both back to back, for the same reason. The servers are pinned to CPU 0 and the load generator (this process) to CPU 1
 * when taskset exists.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { budgetVerdicts, formatVerdict, latencyPremiseLine, premiseLine } from './budget.js'
import { PROJECTS, seed } from './seed.js'
import { dist, HELLO, measure, measurePair, measureTogether, median, pinLoadGenerator, quick, start, type Pair, type Workload } from './measure.js'
import { benchAuth, listWorkloads, pageWorkloads, RECORD_PATH, recordEtag, recordWorkloads, resultsTable, SECRET, writeResults, writeWorkloads } from './service.js'
import { serveSqlite, type SqliteService } from './sqlite-service.js'

pinLoadGenerator()

const HELLO_LINE = 'baseline: bare Fastify hello'
const NAIVE_ONE = 'naive stack: GET one task (JWT)'
const NAIVE_LIST = 'naive stack: list of 20 + count'

/**
 * The contract floor's server CPU per request over the hello's, in its two
 * parts: the headers and the record (the unlogged floor over the baseline
 * load taken in its turns) and the log line (the floor over the unlogged
 * one). Each is the median of the runs' own differences, the two floors and
 * the baseline of one run having been loaded seconds apart.
 */
function floorSplit ({ runs }: Pair): string {
  const helloUs = median(runs.map(([unlogged]) => unlogged.cpuRatio * unlogged.cpuUs))
  const headersUs = median(runs.map(([unlogged]) => unlogged.cpuUs * (1 - unlogged.cpuRatio)))
  const lineUs = median(runs.map(([unlogged, logged]) => logged.cpuUs - unlogged.cpuUs))
  const us = (value: number): string => `${value.toFixed(1)} µs`
  return `contract floor, CPU per request over the hello's ${us(helloUs)}: headers and record ${us(headersUs)}, log line ${us(lineUs)}`
}

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'resourcery-bench-'))
  const { results, table, record } = resultsTable()

  // The baseline server stays up (idle between its runs) for the whole bench: every run of a workload is compared with baseline load taken in turns with it.
  const hello = await start([join(dist, 'bench/baseline.js'), 'hello', '3900'], {}, 3900)
  record(HELLO_LINE, await measure(hello, HELLO, hello))
  const fsync = await start([join(dist, 'bench/baseline.js'), 'insert', '3901', join(dir, 'bare.db')], {}, 3901)
  record('bare better-sqlite3 insert (FULL)', await measure(fsync, { name: 'bare insert', method: 'POST', path: '/items', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}', expect: 201 }, hello))
  fsync.child.kill()
  // What the contract's headers and a log line per request cost with no engine behind them: the most GET one could reach.
  // Beside it, in the same turns, the floor without its log line: the two parts of that cost, apart.
  const floor = await start([join(dist, 'bench/baseline.js'), 'floor', '3903'], {}, 3903)
  const unlogged = await start([join(dist, 'bench/baseline.js'), 'floor-unlogged', '3906'], {}, 3906)
  const floors = await measurePair([unlogged, { name: 'floor, no log line', path: RECORD_PATH }], [floor, { name: 'floor', path: RECORD_PATH }], hello)
  record('contract floor, no log line', floors.first)
  record('contract floor (headers, log line)', floors.second)
  floor.child.kill()
  unlogged.child.kill()

  const auth = benchAuth()
  const files = { '100k': join(dir, '100k.db'), '1M': join(dir, '1M.db') }
  process.stderr.write('seeding 100k tasks…\n')
  await seed(files['100k'], PROJECTS, 100_000)
  // The stack the budget's premise names, on the same file, before the service opens it.
  const naive = await start([join(dist, 'bench/naive.js'), '3904', files['100k'], SECRET], {}, 3904)
  record(NAIVE_ONE, await measure(naive, { name: 'naive GET one', path: RECORD_PATH, headers: auth }, hello))
  record(NAIVE_LIST, await measure(naive, { name: 'naive list', path: '/v1/tasks?limit=20', headers: auth }, hello))
  naive.child.kill()
  if (!quick) {
    process.stderr.write('seeding 1M tasks…\n')
    await seed(files['1M'], PROJECTS, 1_000_000)
  }

  const small = await serveSqlite(files['100k'], 3902, dir)
  // Both sizes are served at once, so that each scaled workload is measured on the two in the same turns:
  // its growth compares the two sizes' req/s seconds apart (the machine drifts).
  const large = quick ? undefined : await serveSqlite(files['1M'], 3905, dir)
  const run = async (label: '100k' | '1M', service: SqliteService, workload: Workload): Promise<void> => {
    process.stderr.write(`${label}: ${workload.name}…\n`)
    record(`${workload.name} [${label}]`, await measure(service.server, workload, hello))
  }
  const growth: Record<string, number> = {}
  // GET one's three lines (JWT, API key, 304) in the same turns, so that they compare with one another.
  const records = recordWorkloads(auth, await recordEtag(small.server.base, auth), small.apiKey)
  process.stderr.write(`100k: ${records.map(workload => workload.name).join(', ')}, in the same turns…\n`)
  const recordFigures = await measureTogether(records.map(workload => [small.server, workload] as const), hello)
  for (const [i, workload] of records.entries()) record(`${workload.name} [100k]`, recordFigures[i]!)
  const scaledLarge = large === undefined ? [] : listWorkloads(large.cursors, auth)
  for (const [i, workload] of listWorkloads(small.cursors, auth).entries()) {
    const atScale = scaledLarge[i]
    if (large === undefined || atScale === undefined) {
      await run('100k', small, workload)
      continue
    }
    process.stderr.write(`100k and 1M: ${workload.name}…\n`)
    const pair = await measurePair([small.server, workload], [large.server, atScale], hello)
    record(`${workload.name} [100k]`, pair.first)
    record(`${atScale.name} [1M]`, pair.second)
    growth[workload.name] = Number(pair.secondOverFirst.toFixed(3))
  }
  large?.server.child.kill('SIGTERM')
  for (const workload of [...pageWorkloads(auth, 100_000), ...writeWorkloads(auth, 100_000)]) await run('100k', small, workload)
  small.server.child.kill('SIGTERM')
  hello.child.kill()
  // The seeded databases (about 1 GB with the 1M one and the bare insert's WAL) go with the run.
  rmSync(dir, { recursive: true, force: true })
  for (const [name, ratio] of Object.entries(growth)) table.push(`growth 1M / 100k: ${name.padEnd(32)} ${ratio.toFixed(3)}`)
  // How far past the budget's premise the service is: its ratio over the naive stack's, same workload shape, same run.
  for (const [service, naive] of [['GET one task (JWT) [100k]', NAIVE_ONE], ['GET list of 20 + X-Total-Count [100k]', NAIVE_LIST]] as const) {
    const ours = results[service]
    const theirs = results[naive]
    if (ours !== undefined && theirs !== undefined) table.push(`service / naive stack: ${service.padEnd(38)} ${(ours.ratio / theirs.ratio).toFixed(3)}`)
  }
  table.push(floorSplit(floors))
  const budget = budgetVerdicts(results, growth)
  table.push(...budget.map(formatVerdict))
  for (const premise of [premiseLine(results[NAIVE_ONE]), latencyPremiseLine(results[HELLO_LINE])]) if (premise !== undefined) table.push(premise)
  process.stdout.write(`\n${table.join('\n')}\n`)
  const out = writeResults('', { results, growth, budget })
  process.stdout.write(`written ${out}\n`)
}

await main()
