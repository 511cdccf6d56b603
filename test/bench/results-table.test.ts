/**
 * What a workload's line in the bench's table and result file says: the
 * median run's figures, and beside them every run's ratio, so that a reader
 * sees how far the runs spread before trusting a verdict on the median.
 */
import t from 'tap'
import { medianRun, type Figures } from '../../bench/measure.js'
import { resultsTable } from '../../bench/service.js'

const run = (ratio: number, rps: number): Figures =>
  ({ rps, ratio, baselineRps: rps / ratio, p50: 2, p99: 6, rssMb: 121.84, serverBusy: 0.981, generatorBusy: 0.7, coreIdle: 0.012, steal: 0.0012, cpuUs: 47.23, kernelUs: 9.81, cpuRatio: ratio, errors: 0 })

t.test('the median run is reported, with every run\'s ratio in the order taken', async t => {
  const figures = medianRun([run(0.5304, 20_760), run(0.4712, 20_100), run(0.5611, 21_000)])
  t.equal(figures.ratio, 0.5304, 'the middle of 0.471, 0.530, 0.561')
  t.equal(figures.rps, 20_760, 'and that run\'s own req/s, not another run\'s')
  t.same(figures.runRatios, [0.5304, 0.4712, 0.5611])
})

t.test('the table line shows the runs\' spread; the result file keeps it to three places', async t => {
  const { table, results, record } = resultsTable()
  record('GET one task (API key) [100k]', medianRun([run(0.4861, 21_015), run(0.5123, 21_500), run(0.4702, 20_000)]))
  t.match(table[0], /ratio 0\.486 /)
  t.match(table[0], /core idle {3}1%/)
  t.match(table[0], /steal {2}0\.1%/)
  t.match(table[0], /runs 0\.486 0\.512 0\.470$/, 'every run, in order, at the end of the line')
  t.same(results['GET one task (API key) [100k]']!.runRatios, [0.486, 0.512, 0.47])
  t.equal(results['GET one task (API key) [100k]']!.coreIdle, 0.01)
})

t.test('the core\'s sleeps follow its idle share when they were counted, whole in the result file', async t => {
  const { table, results, record } = resultsTable()
  record('GET one task (JWT) [100k]', { ...run(0.499, 19_839), coreIdle: 0.221, coreSleeps: { perSecond: 3040.6, meanMicros: 72.7 } })
  t.match(table[0], /core idle {2}22% \( 3041 sleeps\/s of {3}73 µs\) {2}steal/)
  t.same(results['GET one task (JWT) [100k]']!.coreSleeps, { perSecond: 3041, meanMicros: 73 })
  record('GET one task (JWT) [100k], uncounted', run(0.499, 19_839))
  t.notMatch(table[1], /sleeps/, 'nothing is said of sleeps that were not counted')
})

t.test('a workload of a single run (--quick) has no spread to show', async t => {
  const { table, record } = resultsTable()
  record('GET one task (JWT) [100k]', medianRun([run(0.4, 18_000)]))
  t.notMatch(table[0], /runs/)
  t.match(table[0], /cpu ratio 0\.400$/)
})
