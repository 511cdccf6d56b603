/** How a process that could not start says so: one clear line for what the operator can fix, else the stack. */
import { ConfigError } from './config.js'
import { MigrationRefused } from './store/store.js'

export function reportStartupFailure (error: unknown): never {
  if (error instanceof ConfigError || error instanceof MigrationRefused) {
    process.stderr.write(`resourcery: ${error.message}\n`)
  } else {
    process.stderr.write(`resourcery: could not start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  }
  process.exit(1)
}
