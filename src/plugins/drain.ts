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
import type { IncomingMessage } from 'node:http'
import type { Http2Session } from 'node:http2'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { shuttingDown } from '../errors.js'
import { replaceIdleSweep } from '../http/idle-sweep.js'
import type { HttpSocket } from '../http/socket-answers.js'

/** Whether another request was read on `request`'s connection after it: one pipelined behind it. */
function requestBehind (request: IncomingMessage): boolean {
  const latest = (request.socket as HttpSocket).parser?.incoming
  return latest != null && latest !== request
}

export default fp(async function drain (app) {
  // Which connections closing the server closes, and when: never under an answer, nor after a keep-alive wait (idle-sweep.ts).
  replaceIdleSweep(app.server)
  let closing = false
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
    if (request.is404) done(null, payload)
    else done(shuttingDown())
  })
  // RFC 9112 §9.6: the client learns not to send another request on this connection, and Node closes it after
  // the answer. Not while a request pipelined behind this one waits for its own answer (whether it came before
  // the signal and did its work, or after and is refused): that answer closes the connection in turn.
  // HTTP/2 has no Connection field: its sessions were sent a GOAWAY above.
  app.addHook('onSend', function closeConnectionWhileClosing (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
    if (closing && request.raw.httpVersionMajor === 1 && !requestBehind(request.raw)) reply.header('connection', 'close')
    done(null, payload)
  })
}, { name: 'resourcery-drain' })
