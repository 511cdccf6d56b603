/**
 * Runs a Node process to its end and resolves with how it ended and what it
 * wrote. Async, unlike spawnSync, so a test can run several at once: each start
 * of the CLI or the server costs about half a second of loading.
 */
import { spawn } from 'node:child_process'

export interface NodeRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

export async function runNode (args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<NodeRun> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const status = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', resolve)
  })
  return { status, stdout, stderr }
}
