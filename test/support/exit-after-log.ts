// Run as a child process by test/server/process-log.test.ts: logs the way the service does (pino to
// stdout through loggerOptions' destination), two lines back to back, both still held when
// the process exits, then exits: after endLog, or (argv "at-once") straight away. With argv
// "late-lines", after endLog (twice: a shutdown's deadline and its end can both end the log) it
// logs once more in a later turn, and once more in the turn it exits in, as a connection that
// closes while the process stops would.
import { setTimeout as sleep } from 'node:timers/promises'
import pino from 'pino'
import { endLog, loggerOptions } from '../../src/http/log-output.js'

const mode = process.argv[2]
const options = loggerOptions('info') as { level: string, stream: pino.DestinationStream }
const logger = pino({ level: options.level }, options.stream)
logger.info('first line')
logger.info('second line, held while the first is written')
if (mode !== 'at-once') await endLog(logger)
if (mode === 'late-lines') {
  await endLog(logger)
  logger.info('a line after the log was ended')
  await sleep(20)
  logger.info('the last line, in the turn of the exit')
}
process.exit(0)
