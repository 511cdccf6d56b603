/**
 * Request logging at production cost: one line per request, written when it
 * completes (method, URL, status, time, request id, and for a refusal its
 * problem type and detail), instead of Fastify's two
 * (incoming + completed) with full serialized request and response objects.
 * Measured on the bench machine, each of Fastify's lines cost about as much
 * as the whole of a bare hello-world request.
 *
 * Lines go to stdout through pino's asynchronous destination: under load many
 * lines share one write; when idle a line is written at once. What is still
 * buffered is flushed synchronously when the process exits (pino registers
 * that); only a SIGKILL can lose the last lines.
 */
import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import pino from 'pino'

/** Why a request was refused (4xx): told on its completion line rather than a line of its own. */
export interface Refusal { readonly problem: string, readonly detail: string }

const refusals = new WeakMap<FastifyRequest, Refusal>()

export function noteRefusal (request: FastifyRequest, refusal: Refusal): void {
  refusals.set(request, refusal)
}

export class OneLineLogController extends LogController {
  constructor () {
    super({ requestIdLogLabel: 'requestId' })
  }

  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime, ...refusals.get(request) }
    if (error === null || error === undefined) reply.log.info(line, 'request completed')
    else reply.log.error({ ...line, err: error }, 'request errored')
  }
}

export interface LogDestination { write (line: string): void }

export function loggerOptions (level: string, stream?: LogDestination): FastifyServerOptions['logger'] {
  return {
    level,
    stream: stream ?? pino.destination({ dest: 1, sync: false }),
    // Credentials must never reach a log line, whichever serializer logs headers.
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' }
  }
}
