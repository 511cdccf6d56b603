/**
 * Liveness (`/health`: the process answers) and readiness (`/ready`: the
 * database answers too, within a bound), public and outside any version.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { storeUnavailable } from '../errors.js'
import { jsonResponse, problemResponses } from '../resources/responses.js'

const READY_TIMEOUT_MS = 2000

const Status = Type.Object({ status: Type.String() }, { additionalProperties: false })

async function withinDeadline (work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  try {
    await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Pings the database for readiness, one at a time: requests that come while
 * a ping is under way share its answer. /ready is public and unlimited, so
 * each request holding a pooled connection (PostgreSQL) of its own let a
 * flood of probes take the connections the API needs, and, with the database
 * down, pile up behind the 2 s deadline.
 */
function sharedPing (app: FastifyInstance): () => Promise<void> {
  let pinging: Promise<void> | undefined
  return async () => {
    pinging ??= withinDeadline(app.store.ping(), READY_TIMEOUT_MS).finally(() => { pinging = undefined })
    await pinging
  }
}

export async function healthRoutes (app: FastifyInstance): Promise<void> {
  const ping = sharedPing(app)

  app.get('/health', {
    schema: {
      tags: ['operations'],
      operationId: 'getHealth',
      summary: 'Liveness: the process is up',
      description: 'Answers 200 while the process runs, whatever the database does. Public.',
      response: { 200: jsonResponse('The process is up.', Status), ...problemResponses([]) }
    }
  }, async function health () {
    return { status: 'ok' }
  })

  app.get('/ready', {
    schema: {
      tags: ['operations'],
      operationId: 'getReadiness',
      summary: 'Readiness: the database answers',
      description: 'Answers 200 when the database answers within 2 s, 503 otherwise: take the process out of the load balancer meanwhile. Public.',
      response: { 200: jsonResponse('Ready to serve requests.', Status), ...problemResponses([]) }
    }
  }, async function ready (request) {
    try {
      await ping()
    } catch (error) {
      request.log.warn({ err: error }, 'database is not reachable')
      throw storeUnavailable('the database is not reachable')
    }
    return { status: 'ready' }
  })
}
