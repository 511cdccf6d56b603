/**
 * Content negotiation for the JSON API: an Accept header that allows none of
 * the media types the service produces is 406, itself answered in
 * problem+json so the client can still read why. The documentation pages
 * (HTML) are outside this rule.
 */
import Negotiator from 'negotiator'
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import fp from 'fastify-plugin'
import { NotAcceptable } from '../errors.js'

const PRODUCED = ['application/json', 'application/problem+json']
const ANYTHING = new Set(['*/*', 'application/json', 'application/*'])

async function negotiation (app: FastifyInstance): Promise<void> {
  // preParsing, after every onRequest hook: the 406 is counted and carries the rate-limit headers like every answer.
  app.addHook('preParsing', function checkAccept (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) {
    const accept = request.headers.accept
    // The common answers are decided without parsing the header.
    if (accept === undefined || ANYTHING.has(accept) || accept.trim() === '' || request.routeOptions.url?.startsWith('/docs') === true) {
      done(null, payload)
      return
    }
    if (new Negotiator({ headers: { accept } }).mediaType(PRODUCED) === undefined) {
      done(new NotAcceptable(`this service produces ${PRODUCED.join(' and ')}; the Accept header allows neither`))
      return
    }
    done(null, payload)
  })
}

export default fp(negotiation, { name: 'resourcery-negotiation' })
