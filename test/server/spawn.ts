/**
 * Runs the built entry point (dist/src/server.js) as a real child process, the
 * way `npm start` does (with its Node flags), and waits for it to listen.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { TEST_JWT_SECRET } from '../helper.js'
import { startFlags } from '../../bench/start-flags.js'
import { fromRoot, PROJECT_ROOT } from '../support/paths.js'

export const SERVER_ENTRY = fromRoot('dist/src/server.js')

export interface RunningServer {
  readonly child: ChildProcess
  readonly base: string
  /** Every log line so far, parsed. */
  readonly logs: Array<Record<string, unknown>>
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  stderr (): string
}

export async function startServer (env: Record<string, string>, timeoutMs = 20000): Promise<RunningServer> {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run npm run build first (npm test does)`)
  const child = spawn(process.execPath, [...startFlags(PROJECT_ROOT), SERVER_ENTRY], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', JWT_SECRET: TEST_JWT_SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const logs: Array<Record<string, unknown>> = []
  let errors = ''
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>(resolve => {
    child.on('exit', (code, signal) => resolve({ code, signal }))
  })
  child.stderr.on('data', chunk => { errors += String(chunk) })
  // Decoded as a stream: a character split between two chunks stays whole.
  child.stdout.setEncoding('utf8')
  const listening = new Promise<string>((resolve, reject) => {
    let buffered = ''
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk
      let newline: number
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        try {
          const entry = JSON.parse(line) as Record<string, unknown>
          logs.push(entry)
          const match = /listening at (https?:\/\/127\.0\.0\.1:\d+)/.exec(String(entry.msg))
          if (match !== null) resolve(match[1]!)
        } catch {
          // not a log line
        }
      }
    })
    exited.then(({ code }) => reject(new Error(`server exited (${String(code)}) before listening: ${errors}`)), reject)
    setTimeout(() => reject(new Error(`server did not listen within ${timeoutMs} ms: ${errors}`)), timeoutMs).unref()
  })
  const base = await listening
  return { child, base, logs, exited, stderr: () => errors }
}
