/**
 * Content negotiation for the JSON API: an Accept header that allows none of
 * the media types the service produces is 406, itself answered in
 * problem+json so the client can still read why. One that allows problem+json
 * but not JSON (`Accept: application/problem+json`, `application/json;q=0, *\/*`)
 * is 406 too where the answer would be a JSON body: a write's once
 * authentication and validation have passed and before its handler runs, a
 * read's once its handler has answered with a success. Both hold on the API's
 * routes, which document them; the documentation pages (HTML), the health
 * probes and the OpenAPI document answer whatever the Accept.
 */
import Negotiator from 'negotiator'
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import fp from 'fastify-plugin'
import { NotAcceptable, NOTHING_ACCEPTABLE } from '../errors.js'
import { JSON_CONTENT_TYPE } from '../http/json-body.js'
import { prefersMinimal } from '../http/prefer.js'
import { addRouteHook } from '../http/route-hooks.js'
import { problemResponses } from '../resources/responses.js'

// With their charset, as Content-Type gives them: `Accept: application/json; charset=utf-8`, which
// some clients send, names a parameter that a bare `application/json` would not match.
const PRODUCED = [JSON_CONTENT_TYPE, 'application/problem+json; charset=utf-8']
const ANYTHING = new Set(['*/*', 'application/json', 'application/*'])

type Responses = Record<string, unknown> | undefined

/** An Accept header that must be parsed: not absent, empty or one of the common values that allow JSON. */
const isUnusual = (accept: string | undefined): accept is string => accept !== undefined && !ANYTHING.has(accept) && accept.trim() !== ''

const JSON_REFUSED = 'this answer is application/json, which the Accept header does not allow (it allows only application/problem+json, for errors)'

const isRead = (request: FastifyRequest): boolean => request.method === 'GET' || request.method === 'HEAD'

/**
 * The headers of reads whose success the client refuses, as they stood before
 * the handler: the 406 carries these (the request id, security and rate-limit
 * headers), not the success's ETag, Link or X-Total-Count.
 */
const refusedReads = new WeakMap<FastifyRequest, ReturnType<FastifyReply['getHeaders']>>()

/**
 * A success with a JSON body, for a client whose Accept allows problem+json but
 * not JSON: 406. It runs after authentication and validation, so their errors
 * (which the client can read) come first. A write is refused here, before its
 * handler, so a refused write changes nothing; a write asked to answer with no
 * body goes ahead. A read goes ahead too, so that its 404, 412 or 304 (which
 * the client can read as well) comes first, and only its success is refused
 * (refuseReadSuccess).
 */
function refuseJsonRefusers (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  const accept = request.headers.accept
  const bodiless = !isRead(request) && prefersMinimal(request)
  if (!isUnusual(accept) || bodiless || new Negotiator({ headers: { accept } }).mediaTypes(PRODUCED).includes(JSON_CONTENT_TYPE)) {
    done()
    return
  }
  if (!isRead(request)) {
    done(new NotAcceptable(JSON_REFUSED))
    return
  }
  refusedReads.set(request, reply.getHeaders())
  done()
}

/** The success of a read whose client refuses JSON becomes its 406, with the headers the request had before its handler ran. */
function refuseReadSuccess (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void): void {
  const before = refusedReads.get(request)
  if (before === undefined || reply.statusCode < 200 || reply.statusCode > 299) {
    done(null, payload)
    return
  }
  refusedReads.delete(request)
  for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name)
  reply.headers(before)
  done(new NotAcceptable(JSON_REFUSED))
}

async function negotiation (app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', function negotiateApiRoutes (route) {
    // The API's own routes; the documentation pages and health probes answer whatever the Accept, and hidden fallbacks answer 405.
    if (!/^\/v\d+\//.test(route.url) || route.schema?.hide === true) return
    const responses = { ...problemResponses([406]), ...route.schema?.response as Responses }
    route.schema = { ...route.schema, response: responses }
    if (!Object.keys(responses).some(status => status.startsWith('2') && status !== '204')) return
    addRouteHook(route, 'preHandler', refuseJsonRefusers)
    if ([route.method].flat().some(method => method === 'GET' || method === 'HEAD')) addRouteHook(route, 'onSend', refuseReadSuccess)
  })
  // preParsing, after every onRequest hook: the 406 is counted and carries the rate-limit headers like every answer.
  app.addHook('preParsing', function checkAccept (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) {
    const accept = request.headers.accept
    // The common answers are decided without parsing the header; only routes that document a 406 answer one.
    if (!isUnusual(accept) || !('406' in (request.routeOptions.schema?.response as object | undefined ?? {})) || new Negotiator({ headers: { accept } }).mediaType(PRODUCED) !== undefined) {
      done(null, payload)
      return
    }
    done(new NotAcceptable(NOTHING_ACCEPTABLE))
  })
}

export default fp(negotiation, { name: 'resourcery-negotiation' })
