/**
 * Graceful drain: once the app starts closing (SIGTERM), requests still in
 * flight finish, and each connection (HTTP/1.1) or session (HTTP/2) is let go
 * with its last answer, so the process stops as soon as its work is done.
 *
 * Fastify's own answer to a request that arrives while it closes
 * (return503OnClosing) is a plain JSON body, not a problem: it is turned off,
 * and such requests are refused here instead, with the headers of every
 * answer. Fastify marks those answers `Connection: close` itself; an answer to
 * a request that was already under way is marked here. Without that, its
 * keep-alive connection turned idle only after the server had closed the idle
 * ones, and the close waited out the whole keep-alive timeout for it
 * (fastify/fastify#7044), past the shutdown deadline when that timeout is the
 * minute a load balancer in front asks for. An answer already being written
 * when closing began is let finish before its connection closes.
 */
import type { Http2Session } from 'node:http2'
import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { shuttingDown } from '../errors.js'
import { sweepIdleOnceFlushed } from '../http/idle-sweep.js'

export default fp(async function drain (app) {
  // Closing the server must not cut an answer that is still being written (idle-sweep.ts).
  sweepIdleOnceFlushed(app.server)
  let closing = false
  // Connections on which a request arrived after closing began (pipelined behind one in flight): the answer before
  // it keeps the connection open, so the refusal reaches the client instead of the connection closing under it.
  const refusedOn = new WeakSet<Socket>()
  // HTTP/2 (HTTP2=1): Node 20's server.close() leaves sessions open, and Fastify closes them only with
  // forceCloseConnections: true, which would cut HTTP/1 requests in flight too: an idle session held the close
  // until the deadline. Each is closed here as HTTP/2 means it: a GOAWAY, and the streams in flight finish.
  const sessions = new Set<Http2Session>()
  app.server.on('session', (session: Http2Session) => {
    sessions.add(session)
    session.once('close', () => sessions.delete(session))
  })
  app.addHook('preClose', function startDraining (done) {
    closing = true
    for (const session of sessions) session.close()
    done()
  })
  // preParsing, after every onRequest hook: the 503 is counted and carries the rate-limit headers like every answer.
  // An unknown path is answered 404 (a retry elsewhere would be too), counted in its handler's preHandler.
  app.addHook('preParsing', function refuseWhileClosing (request, _reply, payload, done) {
    if (!closing) {
      done(null, payload)
      return
    }
    refusedOn.add(request.raw.socket)
    if (request.is404) done(null, payload)
    else done(shuttingDown())
  })
  // RFC 9112 §9.6: the client learns not to send another request on this connection, and Node closes it after
  // the answer. HTTP/2 has no Connection field: its sessions were sent a GOAWAY above.
  app.addHook('onSend', function closeConnectionWhileClosing (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
    if (closing && request.raw.httpVersionMajor === 1 && !refusedOn.has(request.raw.socket)) reply.header('connection', 'close')
    done(null, payload)
  })
}, { name: 'resourcery-drain' })
