/**
 * The bench's side of allocation-sampler.ts: how a server is started with the
 * sampler preloaded, and the signals that start it and collect what it
 * sampled. A process the sampler is not preloaded into dies of the signal.
 */
import type { ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import type { AllocationRecord } from './allocation-sampler.js'

/** The empty file that tells that sampling has begun. */
export const startedFile = (recordFile: string): string => `${recordFile}.started`

/** The Node flags and environment of a process whose allocations are to be sampled, its record to go to `recordFile`. */
export function sampledProcess (recordFile: string): { nodeFlags: string[], env: Record<string, string> } {
  return {
    nodeFlags: ['--import', new URL('allocation-sampler.js', import.meta.url).href],
    env: { RESOURCERY_ALLOCATION_PROFILE: recordFile }
  }
}

/** Waits for `file` to appear, for at most `seconds`. */
async function appeared (file: string, seconds: number): Promise<boolean> {
  for (let waited = 0; waited < seconds * 10 && !existsSync(file); waited++) await new Promise(resolve => setTimeout(resolve, 100))
  return existsSync(file)
}

/** Starts sampling, and resolves once it has begun: what the process allocates from then on is sampled. */
export async function startSampling (child: ChildProcess, recordFile: string): Promise<void> {
  child.kill('SIGUSR2')
  if (!await appeared(startedFile(recordFile), 30)) throw new Error('the process did not start sampling its allocations')
}

/** Stops sampling, and takes what was sampled: the sampler's files are removed. */
export async function collectSamples (child: ChildProcess, recordFile: string): Promise<AllocationRecord> {
  child.kill('SIGUSR2')
  if (!await appeared(recordFile, 30)) throw new Error(`the process wrote no allocation profile to ${recordFile}`)
  const record = JSON.parse(readFileSync(recordFile, 'utf8')) as AllocationRecord
  rmSync(recordFile)
  rmSync(startedFile(recordFile))
  return record
}
