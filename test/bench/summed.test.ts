/**
 * A run's figures from its stretches of load (bench/measure.ts summed): rates
 * over the stretches' sums, so that a short stretch weighs what it lasted.
 */
import t from 'tap'
import type { HostTicks, Sleeps } from '../../bench/host-cpu.js'
import { summed, type Slice } from '../../bench/measure.js'

/** Ticks of a stretch on a two-core machine: the server's core idle `idle` of `total`, `steal` of the machine's 2 × `total` stolen. */
const ticks = (total: number, idle: number, steal: number, serverSleeps?: Sleeps): HostTicks =>
  ({ serverCore: { idle, steal: 0, total }, machine: { idle: 2 * idle, steal, total: 2 * total }, serverSleeps })

const stretch = (seconds: number, cpu: number, generatorCpu: number, requests: number, host = ticks(100 * seconds, 0, 0)): Slice =>
  ({ requests, seconds, cpu, kernelCpu: cpu / 4, generatorCpu, host, p50: 1, p99: 4, rssMb: 100, errors: 0 })

t.test('how busy the server and the load generator were is each one\'s CPU over the stretches\' time', async t => {
  const figures = summed([stretch(2, 1.6, 2, 20_000), stretch(1, 0.5, 0.7, 8_000)])
  t.equal(figures.serverBusy.toFixed(3), '0.700', 'server: 2.1 CPU seconds in 3')
  t.equal(figures.generatorBusy.toFixed(3), '0.900', 'generator: 2.7 CPU seconds in 3: it was the limit, not the server')
  t.equal(figures.rps.toFixed(0), '9333')
  t.equal(figures.cpuUs.toFixed(1), '75.0', 'server CPU per answer over all the answers')
})

t.test('the server\'s core idle and the machine\'s steal are shares of the stretches\' ticks, a long stretch weighing more', async t => {
  const figures = summed([stretch(2, 1.6, 2, 20_000, ticks(200, 40, 0)), stretch(1, 0.5, 0.7, 8_000, ticks(100, 50, 12))])
  t.equal(figures.coreIdle.toFixed(3), '0.300', '90 idle ticks of the server\'s 300: 0.3, where averaging the two stretches would say 0.35')
  t.equal(figures.steal.toFixed(3), '0.020', '12 stolen ticks of the machine\'s 600')
})

t.test('with nothing counted (no /proc/stat), both read 0 rather than NaN', async t => {
  const figures = summed([stretch(1, 0.5, 0.5, 1000, ticks(0, 0, 0))])
  t.equal(figures.coreIdle, 0)
  t.equal(figures.steal, 0)
})

t.test('the server\'s core\'s sleeps: how many a second over the stretches\' time, and how long one lasted over them all', async t => {
  const figures = summed([
    stretch(2, 1.6, 2, 20_000, ticks(200, 40, 0, { entered: 6000, micros: 300_000 })),
    stretch(1, 0.5, 0.7, 8_000, ticks(100, 50, 0, { entered: 3000, micros: 600_000 }))
  ])
  t.equal(figures.coreSleeps?.perSecond, 3000, '9,000 sleeps in 3 s')
  t.equal(figures.coreSleeps?.meanMicros, 100, '900,000 µs in 9,000 sleeps, where averaging the stretches\' means (50 and 200) would say 125')
})

t.test('a core that never slept has a rate of 0, not a mean of NaN; no counters, no figure', async t => {
  t.same(summed([stretch(1, 1, 0.5, 1000, ticks(100, 0, 0, { entered: 0, micros: 0 }))]).coreSleeps, { perSecond: 0, meanMicros: 0 })
  t.equal(summed([stretch(1, 1, 0.5, 1000)]).coreSleeps, undefined)
})
