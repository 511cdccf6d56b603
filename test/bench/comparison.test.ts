// What `npm run bench:ab` concludes from its runs, and how it picks the workload it was named.
import t from 'tap'
import { comparison } from '../../bench/comparison.js'
import type { Workload } from '../../bench/measure.js'
import { chosenWorkload } from '../../bench/sqlite-service.js'

t.test('a comparison is the median of the pairs\' ratios, with each side\'s median and the spread of the pairs', async t => {
  // Pairs: 1.1, 1.0, 1.2 (after / before, run by run).
  t.same(comparison([100, 200, 50], [110, 200, 60]), { before: 100, after: 110, ratio: 1.1, lowestPair: 1, highestPair: 1.2 })
  const slower = comparison([10], [8])
  t.equal(slower.ratio, 0.8, 'slower after is below 1')
  t.equal(slower.lowestPair, slower.highestPair, 'one pair is its own spread')
})

t.test('one outlying run does not move the ratio', async t => {
  const { ratio, lowestPair, highestPair } = comparison([9000, 9100, 6000, 9050, 9000], [9100, 9200, 9150, 9000, 9180])
  // Pairs: 1.0111, 1.0110, 1.525, 0.9945, 1.02; their median is the 1.0111 of the first.
  t.ok(Math.abs(ratio - 9100 / 9000) < 1e-12, `the pairs' median (${ratio})`)
  t.ok(lowestPair < 1 && highestPair > 1.5, 'the pairs show the outlier')
})

t.test('a shift of the host\'s speed part way through falls on both runs of each pair', async t => {
  // Ten pairs at full speed, ten at 0.6 of it, after 10 % faster within each pair, but for the pair the shift split.
  const before = [...Array(10).fill(1000), ...Array(10).fill(600)] as number[]
  const after = [...Array(9).fill(1100), 660, ...Array(10).fill(660)] as number[]
  const { ratio, before: medianBefore, after: medianAfter } = comparison(before, after)
  t.ok(Math.abs(ratio - 1.1) < 1e-12, `the pairs' median is 1.1 (${ratio})`)
  t.equal(medianAfter / medianBefore, 0.66, 'where the medians fell in different speeds')
})

t.test('sides of different lengths, or none, are refused', async t => {
  t.throws(() => comparison([1, 2], [1]), /same number of runs/)
  t.throws(() => comparison([], []), /at least one/)
})

t.test('a workload is chosen by a part of its name, in any case', async t => {
  const workloads: Workload[] = [
    { name: 'GET one task (JWT)', path: '/v1/tasks/1' },
    { name: 'GET one task (API key)', path: '/v1/tasks/1' },
    { name: 'PATCH a task with If-Match', path: '/v1/tasks/{id}', method: 'PATCH' }
  ]
  t.equal(chosenWorkload(workloads, 'patch').name, 'PATCH a task with If-Match')
  t.equal(chosenWorkload(workloads, 'jwt').name, 'GET one task (JWT)')
  t.throws(() => chosenWorkload(workloads, 'GET one'), { message: '"GET one" names several; one of:\n  GET one task (JWT)\n  GET one task (API key)' })
  t.throws(() => chosenWorkload(workloads, 'DELETE'), { message: '"DELETE" names no workload; one of:\n  GET one task (JWT)\n  GET one task (API key)\n  PATCH a task with If-Match' })
})
