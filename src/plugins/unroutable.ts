/**
 * Requests the router cannot take: a path that is not valid percent-encoding
 * (400), a path segment longer than the router's bound on a parameter (414),
 * a protocol version other than HTTP/1.x read by the HTTP/1 parser (505;
 * http-version.ts), a Host header field missing, repeated or malformed (400;
 * host-header.ts), an Expect other than 100-continue (417; Node hands those
 * to `checkExpectation` instead of routing them) and CONNECT (405: Node
 * hands it the bare socket, and no route takes one). Answered where they
 * arise, below Fastify, they ran no hook: no rate-limit or CORS headers, no
 * count against the client's limit, no log line. So they are recognised
 * before routing (rewriteUrl) and routed to one hidden route that refuses
 * them once the hooks every answer gets have run: request id, security, CORS,
 * rate limiting. Fastify's frameworkErrors, where the router's own refusals land,
 * stays as the fallback for any path the check here lets through.
 */
import { ServerResponse, type IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import fp from 'fastify-plugin'
import { annotate, ExpectationFailed, MethodNotAllowed } from '../errors.js'
import { hostRefusal } from '../http/host-header.js'
import { versionRefusal } from '../http/http-version.js'
import { pathRefusal } from '../http/unroutable-path.js'
import { untracked } from './method-not-allowed.js'
import { notFound } from './problems.js'

/**
 * Where refused requests are routed. Under /v1, so they count against the
 * same limit as the client's other API requests; a client that asks for it
 * by name finds nothing there (404).
 */
const REFUSAL_PATH = '/v1/.refused-before-routing'

const refusals = new WeakMap<IncomingMessage, Error>()

/** Fastify's rewriteUrl: a refused request goes to the refusal route, any other where `rewrite` sends it. */
export function routingRefusals (rewrite: (request: IncomingMessage) => string): (request: IncomingMessage) => string {
  return function rewriteUrl (request: IncomingMessage): string {
    if (refusals.has(request)) return REFUSAL_PATH
    const refusal = versionRefusal(request) ?? hostRefusal(request) ?? pathRefusal(request.url ?? '/')
    if (refusal === undefined) return rewrite(request)
    refusals.set(request, refusal)
    return REFUSAL_PATH
  }
}

export interface UnroutableOptions {
  /** What the server as a whole allows, for the `Allow` of a refused CONNECT. */
  readonly serverAllow: () => string
}

async function unroutable (app: FastifyInstance, { serverAllow }: UnroutableOptions): Promise<void> {
  app.server.on('checkExpectation', function refuseExpectation (request: IncomingMessage, response: ServerResponse) {
    refusals.set(request, new ExpectationFailed('Expect can only be 100-continue'))
    // The client may be holding its body back until told to send it: the connection ends with the answer.
    response.setHeader('connection', 'close')
    app.server.emit('request', request, response)
  })
  // Node hands an HTTP/1 CONNECT its bare socket and, with no listener, closes it unanswered; an HTTP/2
  // one comes with its stream's response, which Node would end as a bare 405. Both are answered here as
  // any request is, and an HTTP/1 connection then closes: there is nothing to tunnel to.
  if (!app.supportedMethods.includes('CONNECT')) app.addHttpMethod('CONNECT')
  app.server.on('connect', function refuseTunnel (request: IncomingMessage, socketOrResponse: unknown) {
    refusals.set(request, annotate(new MethodNotAllowed('CONNECT is not allowed: this service is no proxy'), { headers: { allow: serverAllow() } }))
    if (!(socketOrResponse instanceof Socket)) {
      // An HTTP/2 CONNECT names its target in :authority and has no path: the problem's instance names it, as HTTP/1's target does.
      request.url ??= request.headers[':authority'] as string | undefined
      app.server.emit('request', request, socketOrResponse)
      return
    }
    const socket = socketOrResponse
    const response = new ServerResponse(request)
    response.shouldKeepAlive = false
    response.assignSocket(socket)
    response.once('finish', () => {
      response.detachSocket(socket)
      socket.destroySoon()
    })
    app.server.emit('request', request, response)
  })
  app.all(REFUSAL_PATH, {
    schema: { hide: true },
    config: untracked({ public: true }),
    // Before the body is read: a client whose expectation is refused may never send it.
    preParsing: function refuse (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) {
      const refusal = refusals.get(request.raw)
      if (refusal === undefined) done(null, payload)
      else done(refusal)
    }
  }, async function askedByName (request, reply) {
    return notFound(request, reply)
  })
}

export default fp(unroutable, { name: 'resourcery-unroutable', dependencies: ['resourcery-problems', 'resourcery-rate-limit'] })
