// Run as a child process by test/server/process-log.test.ts: logs the way the service does (pino to
// stdout through loggerOptions' destination), two lines back to back, both still held when
// the process exits, then exits: after endLog, or (argv "at-once") straight away.
import pino from 'pino'
import { endLog, loggerOptions } from '../../src/http/request-log.js'

const options = loggerOptions('info') as { level: string, stream: pino.DestinationStream }
const logger = pino({ level: options.level }, options.stream)
logger.info('first line')
logger.info('second line, held while the first is written')
if (process.argv[2] !== 'at-once') await endLog(logger)
process.exit(0)
