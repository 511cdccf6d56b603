/**
 * Bounds on what one request may ask of the service beyond its body: the
 * length of the query string and the number of its parameters, and on a /v1
 * route that declares none, no parameters at all. (Body size, JSON depth and
 * array lengths are bounded by the parser and the schemas; header size and
 * time by the HTTP server.)
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import fp from 'fastify-plugin'
import { invalid, UriTooLong } from '../errors.js'
import { problemResponses } from '../resources/responses.js'

export const MAX_QUERY_LENGTH = 4096
export const MAX_QUERY_PARAMETERS = 64

function queryBeyondBounds (url: string): Error | undefined {
  const start = url.indexOf('?')
  if (start === -1) return undefined
  const query = url.slice(start + 1)
  if (query.length > MAX_QUERY_LENGTH) return new UriTooLong(`the query string is longer than ${MAX_QUERY_LENGTH} characters`)
  const parameters = query.split('&').filter(Boolean).length
  if (parameters > MAX_QUERY_PARAMETERS) {
    return invalid([{ in: 'query', pointer: '', detail: `has ${parameters} parameters; at most ${MAX_QUERY_PARAMETERS} are accepted` }])
  }
  return undefined
}

/** What a route that declares no query parameters accepts: none, so a typo or a misplaced list parameter is a 400 naming it. */
const NO_QUERY = Type.Object({}, { additionalProperties: false })

async function requestLimits (app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', function refuseUndeclaredQuery (route) {
    // The API's own routes; the documentation and health probes take what they are sent, and hidden fallbacks answer 405 first.
    if (!/^\/v\d+\//.test(route.url) || route.schema?.hide === true || route.schema?.querystring !== undefined) return
    // The 400 that refusal answers is documented with the rest of the route's answers.
    route.schema = { ...route.schema, querystring: NO_QUERY, response: { ...problemResponses([400]), ...route.schema?.response as Record<string, unknown> | undefined } }
  })
  // preParsing, after every onRequest hook: the refusal is counted and carries the rate-limit headers like every answer.
  // An unknown path is counted later (its rate limit is a preHandler, all a not-found handler takes): it is a 404 whatever its query.
  app.addHook('preParsing', function boundQuery (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) {
    const refusal = request.is404 ? undefined : queryBeyondBounds(request.raw.url ?? '')
    if (refusal === undefined) done(null, payload)
    else done(refusal)
  })
}

export default fp(requestLimits, { name: 'resourcery-request-limits' })
