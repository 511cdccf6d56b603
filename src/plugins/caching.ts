/**
 * Every response says whether it may be cached. Reads of protected data are
 * `private, no-cache` (or the resource's max-age), writes and errors
 * `no-store`; Vary names what the answer depends on. GET responses without an
 * ETag of their own get a weak ETag of their body, and a matching
 * If-None-Match turns them into 304. (Records and resource lists are tagged,
 * and answer If-None-Match, in their handlers, which know their tags.)
 */
import type { ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { bodyTag, tagged } from '../http/conditional.js'
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

/** The payload to send: the same, or none for a 304. */
function cacheHeaders (request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  addVary(reply, VARY)
  const reading = request.method === 'GET' || request.method === 'HEAD'
  const status = reply.statusCode
  // Read once: Fastify builds request.routeOptions afresh on every access.
  const policy = request.routeOptions.config?.cacheControl
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', cacheControlOf(reading, status, policy))
  // Records and resource lists carry their own ETag, and their handler already answered If-None-Match; the rest are tagged here.
  if (!reading || status !== 200 || reply.hasHeader('etag') || policy === undefined) return payload
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload
  if (tagged(request, reply, bodyTag(payload))) {
    reply.code(304).removeHeader('content-length')
    return ''
  }
  return payload
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
    done(null, cacheHeaders(request, reply, payload))
  })
}

export default fp(caching, { name: 'resourcery-caching' })
