/**
 * Every response says whether it may be cached. Reads of protected data are
 * `private, no-cache` (or the resource's max-age), writes and errors
 * `no-store`; Vary names what the answer depends on. The reads with a policy
 * (records and resource lists) are tagged, and answer If-None-Match, in their
 * handlers, which know their tags without hashing the body again.
 */
import type { ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { addVary } from '../http/vary.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Cache-Control of successful reads on this route. */
    cacheControl?: string
  }
}

/** What every answer depends on besides its URL. */
const VARY = ['Authorization', 'Api-Version']

/** Cache-Control of an answer: the route's policy for a successful read, else `no-store` (writes and errors). The OpenAPI document states the same. */
export function cacheControlOf (reading: boolean, status: number, policy: string | undefined): string {
  return reading && status < 400 && policy !== undefined ? policy : 'no-store'
}

/** Vary, and Cache-Control unless the handler chose its own. */
function cacheHeaders (request: FastifyRequest, reply: FastifyReply): void {
  addVary(reply, VARY)
  if (reply.hasHeader('cache-control')) return
  const reading = request.method === 'GET' || request.method === 'HEAD'
  reply.header('cache-control', cacheControlOf(reading, reply.statusCode, request.routeOptions.config?.cacheControl))
}

/**
 * Fastify's HEAD routes end every answer without a payload with
 * `Content-Length: 0`, a 304 included, but a 304 may only carry the length a
 * 200 would have had (RFC 9110 §8.6). The 304 of a HEAD goes without one.
 */
function withoutEmptyLengthOn304 (response: ServerResponse): void {
  const writeHead = response.writeHead
  response.writeHead = function writeHeadOf304 (this: ServerResponse, status: number, ...rest: unknown[]) {
    const headers = rest.find(part => typeof part === 'object' && part !== null) as Record<string, unknown> | undefined
    if (status === 304 && headers?.['content-length'] === '0') delete headers['content-length']
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest)
  } as typeof response.writeHead
}

async function caching (app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', function headWithout304Length (request: FastifyRequest, reply: FastifyReply, done: () => void) {
    if (request.method === 'HEAD') withoutEmptyLengthOn304(reply.raw)
    done()
  })
  app.addHook('onSend', function cachingHeaders (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
    cacheHeaders(request, reply)
    done(null, payload)
  })
}

export default fp(caching, { name: 'resourcery-caching' })
