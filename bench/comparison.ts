/**
 * How one build compares with another on a figure measured in pairs of
 * runs taken in turns (`npm run bench:ab`): the median of the ratios within
 * a pair, the medians of each side, and the lowest and highest ratio within
 * a pair. Pairs on both sides of 1 mean the difference is within the
 * machine's noise. The ratio is taken within pairs, not of the two medians:
 * when the host's speed shifts for a while (half of one run's rounds at 0.6
 * of the other half's), each side's median can fall in a different regime,
 * and the medians' ratio said 0.86 where 18 of 20 pairs said 1.03 to 1.3.
 */
import { median } from './measure.js'

export interface Comparison {
  readonly before: number
  readonly after: number
  /** after / before: the median of the pairs' ratios. */
  readonly ratio: number
  readonly lowestPair: number
  readonly highestPair: number
}

export function comparison (before: readonly number[], after: readonly number[]): Comparison {
  if (before.length === 0 || before.length !== after.length) throw new Error('a comparison needs the same number of runs, at least one, on each side')
  const pairs = after.map((value, i) => value / before[i]!)
  const [medianBefore, medianAfter] = [median(before), median(after)]
  return { before: medianBefore, after: medianAfter, ratio: median(pairs), lowestPair: Math.min(...pairs), highestPair: Math.max(...pairs) }
}
