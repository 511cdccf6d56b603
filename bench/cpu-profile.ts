/**
 * Reading a V8 CPU profile (`node --cpu-prof`) as two tables: where the
 * samples landed (self time per function), and how much of the time was
 * spent under each of a chosen set of functions (inclusive time), counting a
 * function once per sample however deep it recurs. Samples taken before
 * `from` (µs of the monotonic clock: `process.hrtime.bigint() / 1000n`) are
 * left out, so that start-up and warm-up do not count.
 */

export interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
/** Times are µs of the monotonic clock (CLOCK_MONOTONIC on Linux, as `process.hrtime`). */
export interface CpuProfile { nodes: ProfileNode[], startTime: number, samples: number[], timeDeltas: number[] }

/** A function of the profile and its share of the sampled time (0..1). */
export interface Share { readonly name: string, readonly share: number }

/** `name file:line`, with the path from the package (node_modules/x/… as x/…, this project's as dist/…). */
export function frameName ({ functionName, url, lineNumber }: CallFrame): string {
  const file = url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(dist\/)/, '$1')
  return file === '' ? functionName || '(anonymous)' : `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`
}

/** Sampled time per node id from `from` on, and the total. */
function timeByNode ({ startTime, samples, timeDeltas }: CpuProfile, from: number): { byNode: Map<number, number>, total: number } {
  const byNode = new Map<number, number>()
  let total = 0
  let at = startTime
  samples.forEach((id, i) => {
    const delta = Math.max(0, timeDeltas[i] ?? 0)
    at += delta
    if (at < from) return
    byNode.set(id, (byNode.get(id) ?? 0) + delta)
    total += delta
  })
  return { byNode, total }
}

const ranked = (times: Map<string, number>, total: number, top: number): Share[] =>
  [...times].map(([name, time]) => ({ name, share: total === 0 ? 0 : time / total })).sort((a, b) => b.share - a.share || a.name.localeCompare(b.name)).slice(0, top)

/** The `top` functions the most samples landed in. */
export function selfTimes (profile: CpuProfile, from: number, top: number): Share[] {
  const { byNode, total } = timeByNode(profile, from)
  const nodes = new Map(profile.nodes.map(node => [node.id, node]))
  const times = new Map<string, number>()
  for (const [id, time] of byNode) {
    const name = frameName(nodes.get(id)!.callFrame)
    times.set(name, (times.get(name) ?? 0) + time)
  }
  return ranked(times, total, top)
}

/** The `top` functions `chosen` by name with the most samples in them or below them. */
export function inclusiveTimes (profile: CpuProfile, from: number, chosen: (name: string) => boolean, top: number): Share[] {
  const { byNode, total } = timeByNode(profile, from)
  const parents = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)
  const names = new Map(profile.nodes.map(node => [node.id, frameName(node.callFrame)]))
  const times = new Map<string, number>()
  for (const [id, time] of byNode) {
    const counted = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const name = names.get(at)!
      if (!chosen(name) || counted.has(name)) continue
      counted.add(name)
      times.set(name, (times.get(name) ?? 0) + time)
    }
  }
  return ranked(times, total, top)
}
