/**
 * Content negotiation for the JSON API: an Accept header that allows none of
 * the media types the service produces is 406, itself answered in
 * problem+json so the client can still read why. One that allows problem+json
 * but not JSON (`Accept: application/problem+json`, `application/json;q=0, *\/*`)
 * is 406 too where the answer would be a JSON body, once authentication and
 * validation have passed and before the handler runs. Both hold on the API's
 * routes, which document them; the documentation pages (HTML), the health
 * probes and the OpenAPI document answer whatever the Accept.
 */
import Negotiator from 'negotiator'
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import fp from 'fastify-plugin'
import { NotAcceptable } from '../errors.js'
import { prefersMinimal } from '../http/prefer.js'
import { addRouteHook } from '../http/route-hooks.js'
import { problemResponses } from '../resources/responses.js'

const PRODUCED = ['application/json', 'application/problem+json']
const ANYTHING = new Set(['*/*', 'application/json', 'application/*'])

type Responses = Record<string, unknown> | undefined

/** An Accept header that must be parsed: not absent, empty or one of the common values that allow JSON. */
const isUnusual = (accept: string | undefined): accept is string => accept !== undefined && !ANYTHING.has(accept) && accept.trim() !== ''

/**
 * A success with a JSON body, for a client whose Accept allows problem+json but
 * not JSON: 406. It runs after authentication and validation, so their errors
 * (which the client can read) come first, and before the handler, so a refused
 * write changes nothing. A write asked to answer with no body goes ahead.
 */
function refuseJsonRefusers (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const accept = request.headers.accept
  const bodiless = request.method !== 'GET' && request.method !== 'HEAD' && prefersMinimal(request)
  if (!isUnusual(accept) || bodiless || new Negotiator({ headers: { accept } }).mediaTypes(PRODUCED).includes('application/json')) {
    done()
    return
  }
  done(new NotAcceptable('this answer is application/json, which the Accept header does not allow (it allows only application/problem+json, for errors)'))
}

async function negotiation (app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', function negotiateApiRoutes (route) {
    // The API's own routes; the documentation pages and health probes answer whatever the Accept, and hidden fallbacks answer 405.
    if (!/^\/v\d+\//.test(route.url) || route.schema?.hide === true) return
    const responses = { ...problemResponses([406]), ...route.schema?.response as Responses }
    route.schema = { ...route.schema, response: responses }
    if (Object.keys(responses).some(status => status.startsWith('2') && status !== '204')) addRouteHook(route, 'preHandler', refuseJsonRefusers)
  })
  // preParsing, after every onRequest hook: the 406 is counted and carries the rate-limit headers like every answer.
  app.addHook('preParsing', function checkAccept (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) {
    const accept = request.headers.accept
    // The common answers are decided without parsing the header; only routes that document a 406 answer one.
    if (!isUnusual(accept) || !('406' in (request.routeOptions.schema?.response as object | undefined ?? {})) || new Negotiator({ headers: { accept } }).mediaType(PRODUCED) !== undefined) {
      done(null, payload)
      return
    }
    done(new NotAcceptable(`this service produces ${PRODUCED.join(' and ')}; the Accept header allows neither`))
  })
}

export default fp(negotiation, { name: 'resourcery-negotiation' })
