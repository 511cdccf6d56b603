/**
 * Preloaded into the server (`node --import`) by `npm run bench:profile --
 * <workload> --alloc`, through allocation-control.ts: V8's sampling heap
 * profiler, counting also the objects the garbage collector has freed since.
 * `--heap-prof` keeps only what is still alive when the process exits, and
 * a request's garbage, which is what makes the collector run, is gone by
 * then. The first SIGUSR2 starts it, and once it samples, an empty file
 * `<file>.started` says so; the next writes what it sampled, with the
 * collections made meanwhile, to the file RESOURCERY_ALLOCATION_PROFILE
 * names (written beside it and renamed, so that a reader never finds half
 * of it).
 */
import { renameSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { constants, PerformanceObserver, type NodeGCPerformanceDetail, type PerformanceEntry } from 'node:perf_hooks'
import { startedFile } from './allocation-control.js'
import type { HeapProfileNode } from './allocation-profile.js'

/** The garbage collections of one kind while sampling: how many, and their time on the main thread. */
export interface Collections { readonly count: number, readonly ms: number }

/** What the sampler writes. */
export interface AllocationRecord {
  /** V8's SamplingHeapProfile, as `--heap-prof` writes one (its samples too). */
  readonly profile: { readonly head: HeapProfileNode }
  /** From the start of sampling to its end. */
  readonly seconds: number
  /** By V8's kind: scavenges (the young generation's, which a request's garbage brings), mark-compacts, and so on. */
  readonly collections: Record<string, Collections>
}

/** Node's names of the kinds a gc entry's detail tells (perf_hooks' NODE_PERFORMANCE_GC_*). */
const KINDS = new Map([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'scavenge'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'mark-compact'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental marking step'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weak-callback pass']
])

/** Bytes between samples, on average: a GET one allocates some 27 KB, so a few samples a request. */
const SAMPLING_INTERVAL = 8192

/** Samples from the first SIGUSR2 on, and writes to `file` at the next. */
function sampleBetweenSignals (file: string): void {
  const session = new Session()
  session.connect()
  const collections: Record<string, { count: number, ms: number }> = {}
  function count (collection: PerformanceEntry): void {
    // A gc entry's detail, which @types/node declares only for marks and measures.
    const { kind } = (collection as PerformanceEntry & { detail: NodeGCPerformanceDetail }).detail
    const counted = collections[KINDS.get(kind) ?? `kind ${kind}`] ??= { count: 0, ms: 0 }
    counted.count++
    counted.ms += collection.duration
  }
  const observer = new PerformanceObserver(list => { list.getEntries().forEach(count) })
  let started: bigint | undefined

  async function start (): Promise<void> {
    await session.post('HeapProfiler.enable')
    // Not in @types/node's parameters, but in Node 20's V8: without them the profile holds only what survived.
    const sampling = { samplingInterval: SAMPLING_INTERVAL, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }
    await session.post('HeapProfiler.startSampling', sampling)
    observer.observe({ entryTypes: ['gc'] })
    started = process.hrtime.bigint()
    writeFileSync(startedFile(file), '')
  }

  async function finish (from: bigint): Promise<void> {
    const { profile } = await session.post('HeapProfiler.stopSampling')
    const seconds = Number(process.hrtime.bigint() - from) / 1e9
    // The collections not yet handed to the callback.
    observer.takeRecords().forEach(count)
    observer.disconnect()
    const record: AllocationRecord = { profile, seconds, collections }
    writeFileSync(`${file}.partial`, JSON.stringify(record))
    renameSync(`${file}.partial`, file)
  }

  // Once: a third signal finds sampling stopped, and says so.
  process.on('SIGUSR2', () => {
    const step = started === undefined ? start() : finish(started)
    step.catch((error: unknown) => {
      process.stderr.write(`allocation sampler: ${error instanceof Error ? error.message : String(error)}\n`)
    })
  })
}

const file = process.env.RESOURCERY_ALLOCATION_PROFILE
if (file !== undefined && file !== '') sampleBetweenSignals(file)
