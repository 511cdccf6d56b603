// What the bench's budget lines say of a run's figures: growth is read from the pairs measured in the same turns.
import t from 'tap'
import { budgetVerdicts, formatVerdict, latencyPremiseLine } from '../../bench/budget.js'
import type { Figures } from '../../bench/measure.js'

const figures = (ratio: number, rps: number, rssMb = 120): Figures =>
  ({ rps, ratio, baselineRps: rps / ratio, p50: 2, p99: 4, rssMb, serverBusy: 0.99, generatorBusy: 0.7, coreIdle: 0.01, steal: 0, cpuUs: 100, kernelUs: 20, cpuRatio: ratio, errors: 0 })

t.test('growth is the pair\'s own figure, not a quotient of ratios over two baselines', async t => {
  // The 100k run's baseline was slow, so its ratio is high; the service held its pace on 1M.
  const results = {
    'GET list of 20 + X-Total-Count [100k]': figures(0.397, 8937),
    'GET list of 20 + X-Total-Count [1M]': figures(0.261, 8455)
  }
  const verdicts = budgetVerdicts(results, { 'GET list of 20 + X-Total-Count': 0.946, 'GET deep position by cursor': 0.75 })
  t.match(verdicts.find(v => v.line === 'GET list of 20 + X-Total-Count: growth 1M / 100k'), { measured: 0.946, kind: '>=', limit: 0.8, met: true })
  t.match(verdicts.find(v => v.line === 'GET deep position by cursor: growth 1M / 100k'), { measured: 0.75, met: false })
  t.match(verdicts.find(v => v.line === 'GET list of 20 + X-Total-Count: ratio'), { measured: 0.397, limit: 0.25, met: true })
})

t.test('a run without the 1M pairs (--quick) has no growth lines', async t => {
  const verdicts = budgetVerdicts({ 'GET list of 20 + X-Total-Count [100k]': figures(0.3, 9000) })
  t.notOk(verdicts.some(v => v.line.includes('growth')))
  t.ok(verdicts.some(v => v.line === 'server RSS under load, peak (MB)'))
})

t.test('RSS is judged to a tenth of a megabyte, and shown so: 150.4 MB is over a 150 MB budget', async t => {
  const line = (rssMb: number): string => formatVerdict(budgetVerdicts({ 'GET one task (JWT) [100k]': figures(0.45, 9000, rssMb) }).find(v => v.line === 'server RSS under load, peak (MB)')!)
  t.match(line(150.4), /\s150\.4\s+<= 150\s+NOT MET$/)
  t.match(line(150), /\s150\.0\s+<= 150\s+met$/)
  // A ratio keeps three decimals, a p99 in whole milliseconds none.
  const verdicts = budgetVerdicts({ 'GET one task (JWT) [100k]': figures(0.45, 9000) }).map(formatVerdict)
  t.ok(verdicts.some(text => /GET one task \(JWT\): ratio\s+0\.450\s+>= 0\.5\s+NOT MET$/.test(text)), verdicts.join('\n'))
  t.ok(verdicts.some(text => /p99 at 50 connections \(ms\)\s+4\s+<= 5\s+met$/.test(text)), verdicts.join('\n'))
})

t.test('a missed p99 is shown beside the bare hello\'s own p99 of the same run', async t => {
  t.equal(latencyPremiseLine({ ...figures(1, 33000), p99: 15 }), 'budget premise: the bare hello\'s own p99 here is 15 ms; GET one\'s p99 budget is 5 ms')
  t.equal(latencyPremiseLine(undefined), undefined, 'a run without the hello has none')
})
