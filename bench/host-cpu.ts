/**
 * What the machine's CPUs did during a stretch of load, from /proc/stat: how
 * long the server's core sat idle, and how much time the hypervisor gave to
 * other guests (steal). A server that is not busy on its whole core is either
 * waiting for requests (its core idle) or denied the core (steal); the two
 * call for different readings of a ratio, and process CPU alone cannot tell
 * them apart. How that idle time came (many short sleeps or a few long ones)
 * is read from the core's cpuidle counters.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** Clock ticks since boot of one /proc/stat line, in the parts a stretch is read by. */
export interface CpuTicks { readonly idle: number, readonly steal: number, readonly total: number }

/**
 * The times a core went to sleep (entered an idle state) and the µs it slept,
 * from cpuidle. Under a hypervisor a sleeping virtual CPU has left its
 * physical one, and each wake-up is the host's to make: idle time in
 * thousands of short sleeps a second is time lost to wake-ups, where a few
 * long ones are a core with nothing to do.
 */
export interface Sleeps { readonly entered: number, readonly micros: number }

/**
 * The ticks a stretch took: what a slice keeps, so that stretches add up.
 * `serverSleeps` is absent where cpuidle cannot be read (not Linux, no
 * cpuidle driver, or the server not pinned to a core of its own).
 */
export interface HostTicks { readonly serverCore: CpuTicks, readonly machine: CpuTicks, readonly serverSleeps: Sleeps | undefined }

const NONE: CpuTicks = { idle: 0, steal: 0, total: 0 }

/** Where the cpuidle counters of CPU 0, the servers' core when pinned, are. */
const SERVER_CPUIDLE = '/sys/devices/system/cpu/cpu0/cpuidle'

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

/** `a` and `b` added, or with `sign` -1, `b` taken from `a`. */
const sleepsCombined = (a: Sleeps, b: Sleeps, sign: 1 | -1): Sleeps =>
  ({ entered: a.entered + sign * b.entered, micros: a.micros + sign * b.micros })

/** Both stretches' ticks together; a stretch that could not read cpuidle adds no sleeps. */
export const plus = (a: HostTicks, b: HostTicks): HostTicks => ({
  serverCore: combined(a.serverCore, b.serverCore, 1),
  machine: combined(a.machine, b.machine, 1),
  serverSleeps: a.serverSleeps === undefined || b.serverSleeps === undefined ? a.serverSleeps ?? b.serverSleeps : sleepsCombined(a.serverSleeps, b.serverSleeps, 1)
})

export const NO_TICKS: HostTicks = { serverCore: NONE, machine: NONE, serverSleeps: undefined }

/**
 * A core's sleeps since boot, summed over its idle states (the `state*`
 * folders of `/sys/devices/system/cpu/cpuN/cpuidle`, each with its `usage`
 * and `time` in µs). Undefined when the folder has no state to read.
 */
export function sleepsIn (cpuidle: string): Sleeps | undefined {
  let states: string[]
  try {
    states = readdirSync(cpuidle).filter(name => /^state\d+$/.test(name))
  } catch {
    return undefined
  }
  if (states.length === 0) return undefined
  const counter = (state: string, file: string): number => Number(readFileSync(join(cpuidle, state, file), 'utf8'))
  return states.reduce((sum, state) => ({ entered: sum.entered + counter(state, 'usage'), micros: sum.micros + counter(state, 'time') }), { entered: 0, micros: 0 })
}

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
    // Unpinned, the server runs on any core, and no one core's sleeps are its own.
    return { serverCore: parseCpuLine(stat, core), machine: parseCpuLine(stat, 'cpu'), serverSleeps: pinned ? sleepsIn(SERVER_CPUIDLE) : undefined }
  }
  const before = read()
  return () => {
    const after = read()
    return {
      serverCore: combined(after.serverCore, before.serverCore, -1),
      machine: combined(after.machine, before.machine, -1),
      serverSleeps: after.serverSleeps === undefined || before.serverSleeps === undefined ? undefined : sleepsCombined(after.serverSleeps, before.serverSleeps, -1)
    }
  }
}

/** A share of ticks, 0 when none were counted. */
export const share = (part: number, total: number): number => total > 0 ? part / total : 0
