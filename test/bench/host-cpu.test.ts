/**
 * The bench's reading of /proc/stat (bench/host-cpu.ts): idle and steal
 * ticks of the machine and of the servers' core, from the kernel's own
 * layout of the file.
 */
import t from 'tap'
import { hostTicksFrom, parseCpuLine } from '../../bench/host-cpu.js'

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
