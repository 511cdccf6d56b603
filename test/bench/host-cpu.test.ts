/**
 * The bench's reading of /proc/stat (bench/host-cpu.ts): idle and steal
 * ticks of the machine and of the servers' core, from the kernel's own
 * layout of the file; and of the servers' core's cpuidle counters, how
 * often it slept and how long.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { hostTicksFrom, NO_TICKS, parseCpuLine, plus, sleepsIn, type HostTicks } from '../../bench/host-cpu.js'

// A two-core machine's /proc/stat as Linux 6 writes it: user nice system idle iowait irq softirq steal guest guest_nice.
const STAT = `cpu  55324 0 14850 53733 316 0 5202 153 0 0
cpu0 28121 0 6547 27423 61 0 2732 68 0 0
cpu1 27203 0 8303 26310 255 0 2469 85 0 0
intr 123 0 0
ctxt 456
`

t.test('a core\'s line: idle counts iowait with it, steal is its own, the total is every state', async t => {
  t.same(parseCpuLine(STAT, 'cpu0'), { idle: 27423 + 61, steal: 68, total: 28121 + 6547 + 27423 + 61 + 2732 + 68 })
  t.same(parseCpuLine(STAT, 'cpu'), { idle: 53733 + 316, steal: 153, total: 55324 + 14850 + 53733 + 316 + 5202 + 153 })
})

t.test('a core the file does not list counts nothing', async t => {
  t.same(parseCpuLine(STAT, 'cpu7'), { idle: 0, steal: 0, total: 0 })
  t.same(parseCpuLine('', 'cpu'), { idle: 0, steal: 0, total: 0 })
})

t.test('on this machine, a stretch\'s ticks only grow and idle never exceeds the total', { skip: process.platform !== 'linux' && 'no /proc/stat outside Linux' }, async t => {
  const since = hostTicksFrom(true)
  // Idle time ticks too: a sleeping stretch is counted like a busy one.
  await new Promise(resolve => setTimeout(resolve, 80))
  const { serverCore, machine } = since()
  t.ok(machine.total > 0, `the machine counted ${machine.total} ticks in 80 ms`)
  t.ok(machine.total >= serverCore.total, 'the machine counts at least what one of its cores does')
  t.ok(serverCore.idle >= 0 && serverCore.idle <= serverCore.total)
  t.ok(machine.steal >= 0 && machine.steal <= machine.total)
})

/** A cpuidle folder as Linux lays it out: one `stateN` folder per idle state, with `usage` (sleeps entered) and `time` (µs slept). */
function cpuidleFolder (t: Test, states: ReadonlyArray<{ name: string, usage: number, time: number }>): string {
  const folder = mkdtempSync(join(tmpdir(), 'cpuidle-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  for (const [index, { name, usage, time }] of states.entries()) {
    mkdirSync(join(folder, `state${index}`))
    writeFileSync(join(folder, `state${index}`, 'name'), `${name}\n`)
    writeFileSync(join(folder, `state${index}`, 'usage'), `${usage}\n`)
    writeFileSync(join(folder, `state${index}`, 'time'), `${time}\n`)
  }
  writeFileSync(join(folder, 'driver'), 'not a state\n')
  return folder
}

t.test('a core\'s sleeps are summed over its idle states: a poll and a halt are both a sleep', async t => {
  const folder = cpuidleFolder(t, [{ name: 'POLL', usage: 40, time: 900 }, { name: 'haltpoll idle', usage: 1_385_500, time: 1_591_248_962 }])
  t.same(sleepsIn(folder), { entered: 1_385_540, micros: 1_591_249_862 })
})

t.test('a core without cpuidle counters has no sleeps to tell, rather than none', async t => {
  t.equal(sleepsIn(join(tmpdir(), 'no-such-cpuidle-folder')), undefined)
  t.equal(sleepsIn(cpuidleFolder(t, [])), undefined, 'a folder with no state in it')
})

t.test('stretches add their sleeps; one that could not read them adds none', async t => {
  const stretch = (entered: number, micros: number | undefined): HostTicks =>
    ({ ...NO_TICKS, serverSleeps: micros === undefined ? undefined : { entered, micros } })
  t.same(plus(stretch(100, 4000), stretch(50, 1000)).serverSleeps, { entered: 150, micros: 5000 })
  t.same(plus(NO_TICKS, stretch(50, 1000)).serverSleeps, { entered: 50, micros: 1000 }, 'the first stretch added to nothing counted yet')
  t.equal(plus(NO_TICKS, NO_TICKS).serverSleeps, undefined)
})
