/**
 * What the machine's CPUs did during a stretch of load, from /proc/stat: how
 * long the server's core sat idle, and how much time the hypervisor gave to
 * other guests (steal). A server that is not busy on its whole core is either
 * waiting for requests (its core idle) or denied the core (steal); the two
 * call for different readings of a ratio, and process CPU alone cannot tell
 * them apart.
 */
import { readFileSync } from 'node:fs'

/** Clock ticks since boot of one /proc/stat line, in the parts a stretch is read by. */
export interface CpuTicks { readonly idle: number, readonly steal: number, readonly total: number }

/** The ticks a stretch took: what a slice keeps, so that stretches add up. */
export interface HostTicks { readonly serverCore: CpuTicks, readonly machine: CpuTicks }

const NONE: CpuTicks = { idle: 0, steal: 0, total: 0 }

/**
 * One line of /proc/stat (`cpu` for the machine, `cpu0` for a core):
 * user nice system idle iowait irq softirq steal, then guest time that user
 * already counts. Idle includes iowait: the core had nothing to run either way.
 */
export function parseCpuLine (stat: string, name: string): CpuTicks {
  const line = stat.split('\n').find(text => text.startsWith(`${name} `))
  if (line === undefined) return NONE
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number)
  return { idle: idle + iowait, steal, total: user + nice + system + idle + iowait + irq + softirq + steal }
}

/** `a` and `b` added, or with `sign` -1, `b` taken from `a`. */
const combined = (a: CpuTicks, b: CpuTicks, sign: 1 | -1): CpuTicks =>
  ({ idle: a.idle + sign * b.idle, steal: a.steal + sign * b.steal, total: a.total + sign * b.total })

export const plus = (a: HostTicks, b: HostTicks): HostTicks =>
  ({ serverCore: combined(a.serverCore, b.serverCore, 1), machine: combined(a.machine, b.machine, 1) })

export const NO_TICKS: HostTicks = { serverCore: NONE, machine: NONE }

/**
 * Starts counting: the returned function gives the ticks since. The server's
 * core is CPU 0 when the bench pins its servers there; unpinned, the server
 * may run on any, and the machine's figures stand for its core too. Where
 * /proc/stat cannot be read (not Linux), every count is zero.
 */
export function hostTicksFrom (pinned: boolean): () => HostTicks {
  const core = pinned ? 'cpu0' : 'cpu'
  const read = (): HostTicks => {
    let stat = ''
    try { stat = readFileSync('/proc/stat', 'utf8') } catch { /* no /proc: nothing to count */ }
    return { serverCore: parseCpuLine(stat, core), machine: parseCpuLine(stat, 'cpu') }
  }
  const before = read()
  return () => {
    const after = read()
    return { serverCore: combined(after.serverCore, before.serverCore, -1), machine: combined(after.machine, before.machine, -1) }
  }
}

/** A share of ticks, 0 when none were counted. */
export const share = (part: number, total: number): number => total > 0 ? part / total : 0
