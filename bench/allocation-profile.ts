/**
 * Reading a sampling heap profile (allocation-sampler.ts) with the CPU
 * profile's tables (cpu-profile.ts): each node's sampled bytes weigh as a
 * sample's time does there, so the same rankings say which functions
 * allocated the bytes (self) and which of the engine's did so in or below
 * them (inclusive).
 */
import type { CallFrame, CpuProfile } from './cpu-profile.js'

/** A node of V8's sampling heap profile: the bytes sampled in the function itself, not its callees. */
export interface HeapProfileNode { readonly callFrame: CallFrame, readonly selfSize: number, readonly children: readonly HeapProfileNode[] }

/** The profile as weighted samples, one a node that allocated, its bytes as its time; and the bytes in all. */
export function asWeightedSamples (head: HeapProfileNode): { profile: CpuProfile, bytes: number } {
  const profile: CpuProfile = { startTime: 0, nodes: [], samples: [], timeDeltas: [] }
  let bytes = 0
  // Depth-first with a stack of its own: a deep call chain is no risk to this process's stack.
  const pending: Array<{ node: HeapProfileNode, id: number }> = [{ node: head, id: 1 }]
  let lastId = 1
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, id } = next
    const children = node.children.map(child => {
      pending.push({ node: child, id: ++lastId })
      return lastId
    })
    profile.nodes.push({ id, callFrame: node.callFrame, children })
    if (node.selfSize > 0) {
      profile.samples.push(id)
      profile.timeDeltas.push(node.selfSize)
      bytes += node.selfSize
    }
  }
  return { profile, bytes }
}
