/**
 * How one build compares with another on a figure measured in pairs of
 * runs taken in turns (`npm run bench:ab`): the ratio of the medians, and the
 * lowest and highest ratio within a pair. Pairs on both sides of 1 mean the
 * difference is within the machine's noise.
 */
import { median } from './measure.js'

export interface Comparison {
  readonly before: number
  readonly after: number
  /** after / before, of the medians. */
  readonly ratio: number
  readonly lowestPair: number
  readonly highestPair: number
}

export function comparison (before: readonly number[], after: readonly number[]): Comparison {
  if (before.length === 0 || before.length !== after.length) throw new Error('a comparison needs the same number of runs, at least one, on each side')
  const pairs = after.map((value, i) => value / before[i]!)
  const [medianBefore, medianAfter] = [median(before), median(after)]
  return { before: medianBefore, after: medianAfter, ratio: medianAfter / medianBefore, lowestPair: Math.min(...pairs), highestPair: Math.max(...pairs) }
}
