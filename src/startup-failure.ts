/** How a process that could not start says so: one clear line for what the operator can fix, else the stack. */
import { ConfigError } from './config.js'
import { DefinitionError } from './resources/define.js'
import { DatabaseUnreachable, MigrationRefused } from './store/store.js'

/** A start stopped by something outside the code that the message tells the operator how to fix (a file, a port). */
export class StartupError extends Error {
  override name = 'StartupError'
}

/** Errors whose message says what to fix (a setting, a file, a port, a definition's resource and field): a stack would only bury it. */
const FOR_THE_OPERATOR = [ConfigError, MigrationRefused, DatabaseUnreachable, StartupError, DefinitionError]

export function reportStartupFailure (error: unknown): never {
  if (FOR_THE_OPERATOR.some(kind => error instanceof kind)) {
    process.stderr.write(`resourcery: ${(error as Error).message}\n`)
  } else {
    process.stderr.write(`resourcery: could not start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  }
  process.exit(1)
}
