/**
 * Content negotiation for the JSON API: an Accept header that allows none of
 * the media types the service produces is 406, itself answered in
 * problem+json so the client can still read why. The documentation pages
 * (HTML) are outside this rule.
 */
import Negotiator from 'negotiator'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { NotAcceptable } from '../errors.js'

const PRODUCED = ['application/json', 'application/problem+json']
const ANYTHING = new Set(['*/*', 'application/json', 'application/*'])

async function negotiation (app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', function checkAccept (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    const accept = request.headers.accept
    // The common answers are decided without parsing the header.
    if (accept === undefined || ANYTHING.has(accept) || accept.trim() === '' || request.routeOptions.url?.startsWith('/docs') === true) {
      done()
      return
    }
    if (new Negotiator({ headers: { accept } }).mediaType(PRODUCED) === undefined) {
      done(new NotAcceptable(`this service produces ${PRODUCED.join(' and ')}; the Accept header allows neither`))
      return
    }
    done()
  })
}

export default fp(negotiation, { name: 'resourcery-negotiation' })
