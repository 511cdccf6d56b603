/**
 * A run's figures from its stretches of load (bench/measure.ts summed): rates
 * over the stretches' sums, so that a short stretch weighs what it lasted.
 */
import t from 'tap'
import { summed, type Slice } from '../../bench/measure.js'

const stretch = (seconds: number, cpu: number, generatorCpu: number, requests: number): Slice =>
  ({ requests, seconds, cpu, kernelCpu: cpu / 4, generatorCpu, p50: 1, p99: 4, rssMb: 100, errors: 0 })

t.test('how busy the server and the load generator were is each one\'s CPU over the stretches\' time', async t => {
  const figures = summed([stretch(2, 1.6, 2, 20_000), stretch(1, 0.5, 0.7, 8_000)])
  t.equal(figures.serverBusy.toFixed(3), '0.700', 'server: 2.1 CPU seconds in 3')
  t.equal(figures.generatorBusy.toFixed(3), '0.900', 'generator: 2.7 CPU seconds in 3: it was the limit, not the server')
  t.equal(figures.rps.toFixed(0), '9333')
  t.equal(figures.cpuUs.toFixed(1), '75.0', 'server CPU per answer over all the answers')
})
