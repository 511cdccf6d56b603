/**
 * Content negotiation for the JSON API: an Accept header that allows none of
 * the media types the service produces is 406, itself answered in
 * problem+json so the client can still read why. One that allows problem+json
 * but not JSON (`Accept: application/problem+json`, `application/json;q=0, *\/*`)
 * is 406 too where the answer would be a JSON body: before the handler runs, so
 * a refused write changes nothing. This holds on the API's routes, which
 * document it; the documentation pages (HTML), the health probes and the
 * OpenAPI document answer whatever the Accept.
 */
import Negotiator from 'negotiator'
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import fp from 'fastify-plugin'
import { NotAcceptable } from '../errors.js'
import { prefersMinimal } from '../http/prefer.js'
import { problemResponses } from '../resources/responses.js'

const PRODUCED = ['application/json', 'application/problem+json']
const ANYTHING = new Set(['*/*', 'application/json', 'application/*'])

type Responses = Record<string, unknown> | undefined

/** Whether a success here has a JSON body: the route declares one, and a write was not asked for none (`Prefer: return=minimal`). */
function answersWithJson (request: FastifyRequest, responses: NonNullable<Responses>): boolean {
  if (!Object.keys(responses).some(status => status.startsWith('2') && status !== '204')) return false
  return request.method === 'GET' || request.method === 'HEAD' || !prefersMinimal(request)
}

async function negotiation (app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', function documentNotAcceptable (route) {
    // The API's own routes; the documentation pages and health probes answer whatever the Accept, and hidden fallbacks answer 405.
    if (!/^\/v\d+\//.test(route.url) || route.schema?.hide === true) return
    route.schema = { ...route.schema, response: { ...problemResponses([406]), ...route.schema?.response as Responses } }
  })
  // preParsing, after every onRequest hook: the 406 is counted and carries the rate-limit headers like every answer.
  app.addHook('preParsing', function checkAccept (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) {
    const accept = request.headers.accept
    // The common answers are decided without parsing the header; only routes that document a 406 answer one.
    const responses = accept === undefined || ANYTHING.has(accept) || accept.trim() === '' ? undefined : request.routeOptions.schema?.response as Responses
    if (responses === undefined || !('406' in responses)) {
      done(null, payload)
      return
    }
    const acceptable = new Negotiator({ headers: { accept } }).mediaTypes(PRODUCED)
    if (acceptable.length === 0) {
      done(new NotAcceptable(`this service produces ${PRODUCED.join(' and ')}; the Accept header allows neither`))
      return
    }
    if (!acceptable.includes('application/json') && answersWithJson(request, responses)) {
      done(new NotAcceptable('this answer is application/json, which the Accept header does not allow (it allows only application/problem+json, for errors)'))
      return
    }
    done(null, payload)
  })
}

export default fp(negotiation, { name: 'resourcery-negotiation' })
