/**
 * Content negotiation for the JSON API: an Accept header that allows none of
 * the media types the service produces is 406, itself answered in
 * problem+json so the client can still read why. The documentation pages
 * (HTML) are outside this rule.
 */
import Negotiator from 'negotiator'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { NotAcceptable } from '../errors.js'

const PRODUCED = ['application/json', 'application/problem+json']

async function negotiation (app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async function checkAccept (request: FastifyRequest) {
    const accept = request.headers.accept
    if (accept === undefined || accept.trim() === '' || request.routeOptions.url?.startsWith('/docs') === true) return
    if (new Negotiator({ headers: { accept } }).mediaType(PRODUCED) === undefined) {
      throw new NotAcceptable(`this service produces ${PRODUCED.join(' and ')}; the Accept header allows neither`)
    }
  })
}

export default fp(negotiation, { name: 'resourcery-negotiation' })
