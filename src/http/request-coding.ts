/**
 * The content codings a request body may come in (RFC 9110 §8.4): gzip,
 * deflate and br, decoded by @fastify/compress as the body is read. The body
 * limit holds for the decoded body, so a small coded body that would inflate
 * past it is a 413 once the limit is reached, not a process out of memory.
 *
 * What the plugin leaves to its user, done here:
 * - Coding names are case-insensitive (§8.4.1) and x-gzip is gzip
 *   (§8.4.1.3); the plugin matches them exactly, so `GZIP` was a 415.
 * - A coding it cannot decode is a 415 problem that names the ones it can,
 *   also in `Accept-Encoding`, as §15.5.16 asks of a 415 for a coding.
 * - Content-Encoding describes a body. A request without one (GET, HEAD, or
 *   a DELETE with no body) is not refused for it: the plugin refused
 *   `GET /v1/tasks` with `Content-Encoding: bogus` as a 415.
 */
import type { FastifyCompressOptions } from '@fastify/compress'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import { annotate, UnsupportedMediaType } from '../errors.js'
import { gzipForItsAlias } from './content-coding.js'
import { http2Stream } from './http2-stream.js'
import { addRouteHook } from './route-hooks.js'

/** The codings a request body may come in, besides identity (none), as Accept-Encoding names them. */
export const REQUEST_CODINGS = ['gzip', 'deflate', 'br'] as const

/** The codings as Accept-Encoding names them. */
export const ACCEPTED_CODINGS = REQUEST_CODINGS.join(', ')

/** Methods whose body Fastify never reads: their routes decode none. */
const BODYLESS = new Set(['GET', 'HEAD'])

/** The Content-Encoding names the plugin decodes, as it matches them. */
const canonicalCoding = (value: string): string => gzipForItsAlias(value.trim().toLowerCase())

/**
 * Whether a request has a body. Over HTTP/1 its framing says so: chunks, or
 * a length above 0 (RFC 9112 §6.3). Over HTTP/2 a body needs no length: the
 * stream says whether its headers ended it.
 */
function hasBody (request: FastifyRequest): boolean {
  const stream = http2Stream(request.raw)
  if (stream !== undefined) return !stream.endAfterHeaders
  return request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0'
}

/**
 * Puts a request's Content-Encoding in the form the plugin matches, or takes
 * it away when there is no body for it to describe. The plugin reads the
 * header itself, from the request's own headers, which is why they are
 * changed here rather than read.
 */
function canonicalContentEncoding (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const coding = request.headers['content-encoding']
  if (coding !== undefined) {
    if (!hasBody(request)) delete request.headers['content-encoding']
    else request.headers['content-encoding'] = canonicalCoding(coding)
  }
  done()
}

/**
 * For an onRoute hook that runs before the plugin's: a route whose method
 * never has a body decodes none, and one that may have a body reads its
 * Content-Encoding as the plugin matches it.
 */
export function decodeBodiesOnly (route: RouteOptions): void {
  if ([route.method].flat().every(method => BODYLESS.has(method))) {
    route.decompress = false
    return
  }
  addRouteHook(route, 'onRequest', canonicalContentEncoding)
}

/** @fastify/compress's options for request bodies. */
export const requestDecoding: Pick<FastifyCompressOptions, 'requestEncodings' | 'onUnsupportedRequestEncoding'> = {
  requestEncodings: [...REQUEST_CODINGS, 'identity'],
  onUnsupportedRequestEncoding: (coding: string): Error => annotate(
    new UnsupportedMediaType(`a body coded as ${JSON.stringify(coding.slice(0, 40))} cannot be read here; send it as it is, or coded with one of ${ACCEPTED_CODINGS}`),
    { headers: { 'accept-encoding': ACCEPTED_CODINGS } }
  )
}
