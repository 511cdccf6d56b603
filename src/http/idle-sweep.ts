/**
 * What server.close() closes: the connections that are neither sending a
 * request nor waiting for an answer, as Node documents closeIdleConnections().
 * Node's own sweep, which close() runs once, differs from that in three
 * ways, each of which cost a shutdown:
 * - It counts a connection idle once its answer's end() was called, while
 *   that answer's bytes may still be queued for a slow reader (a large list
 *   to a phone on a poor network). The answer was cut short, with nothing in
 *   the log to say so: a 20 MB list reached its reader as its first 4 MB.
 * - It never counts idle a connection that has sent nothing yet (it dates
 *   such a connection as a request begun, so that the headers deadline ends
 *   it), and close() stops the timer that enforces that deadline. A browser's
 *   preconnect, or any client that opened a connection and sent nothing, held
 *   every shutdown until its deadline, which then exited 1 "with requests
 *   still open".
 * - A connection whose answer was under way at the sweep, and said
 *   keep-alive, turned idle after it and waited out the keep-alive timeout:
 *   one written to a slow reader, or requests pipelined behind one another.
 * - It never counts idle a connection that has sent part of a request (a
 *   request line, some headers) or of a TLS handshake, and, with the timer
 *   stopped, nothing ends it: a slow or stalled client held the shutdown to
 *   its deadline just the same.
 * Here the sweep runs again each time an answer that was under way is
 *   written, never while one is still being written, and a connection is
 *   closed once, a moment into the drain (the time a client about to send a
 *   request, or in the middle of one, needs to finish it), no request of its
 *   has reached the service: it has sent nothing, or not a whole request's
 *   head, or not a whole handshake. A request whose head arrived in time gets
 *   its answer (a 503 while draining), as before.
 */
import type { Server as HttpServer, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Server as TlsServer, type TLSSocket } from 'node:tls'
import type { HttpSocket } from './socket-answers.js'

/** How long into the drain (or after it became ready, if later) a connection may go without a request reaching the service. */
const REQUEST_GRACE_MS = 1000

/** The open sockets `server` emits with `event`, each with when it became ready for a request. */
function openSockets<T extends Socket> (server: HttpServer, event: 'connection' | 'secureConnection', onOpen?: (socket: T) => void): Map<T, number> {
  const sockets = new Map<T, number>()
  server.on(event, (socket: T) => {
    sockets.set(socket, performance.now())
    socket.once('close', () => sockets.delete(socket))
    onOpen?.(socket)
  })
  return sockets
}

/** Closes `socket` in `delayMs` (at once if not positive) unless by then `inUse` says a request of its reached the service. */
function closeUnlessInUseIn (socket: Socket, delayMs: number, inUse: () => boolean): void {
  const closeUnlessInUse = (): void => { if (!socket.destroyed && !inUse()) socket.destroy() }
  if (delayMs <= 0) closeUnlessInUse()
  else setTimeout(closeUnlessInUse, delayMs).unref()
}

/**
 * A request read whole on this connection is being answered (its answer holds
 * the socket until written), or the connection is an HTTP/2 session, whose
 * streams the drain plugin lets finish behind a GOAWAY.
 */
const answering = (socket: HttpSocket) => (): boolean => socket._httpMessage != null || (socket as Partial<TLSSocket>).alpnProtocol === 'h2'

/** Where a connection comes from: a TLS socket has its TCP connection's. */
const peerOf = (socket: Socket): string => `${socket.remoteAddress ?? ''}:${socket.remotePort ?? ''}`

/** Replaces `server`'s idle sweep (run by close()): answers are written whole, connections that bring no request closed. */
export function replaceIdleSweep (server: HttpServer): void {
  let draining = false
  // No TCP connection is accepted once the drain began (close() stops listening as it sweeps).
  const connections = openSockets<HttpSocket>(server, 'connection')
  // Over TLS (HTTPS, and HTTP/1 on the HTTP/2 server), HTTP runs on the socket 'secureConnection' brings, and its TCP
  // connection is in use once that handshake is done: the TLS socket is then judged on its own. A handshake may end
  // during the drain: that connection is given the same moment for its request.
  const tls = server instanceof TlsServer
  const securedPeers = new Set<string>()
  const httpSockets = tls
    ? openSockets<HttpSocket>(server, 'secureConnection', socket => {
      const peer = peerOf(socket)
      securedPeers.add(peer)
      socket.once('close', () => securedPeers.delete(peer))
      if (draining) closeUnlessInUseIn(socket, REQUEST_GRACE_MS, answering(socket))
    })
    : connections
  const handshaken = (socket: Socket): () => boolean => {
    const peer = peerOf(socket)
    return () => securedPeers.has(peer)
  }
  const watched = new WeakSet<ServerResponse>()
  const sweep = server.closeIdleConnections.bind(server)
  server.closeIdleConnections = function closeIdleConnectionsAsDocumented () {
    if (!draining) {
      draining = true
      const now = performance.now()
      for (const [socket, readyAt] of connections) closeUnlessInUseIn(socket, readyAt + REQUEST_GRACE_MS - now, tls ? handshaken(socket) : answering(socket))
      if (tls) for (const [socket, readyAt] of httpSockets) closeUnlessInUseIn(socket, readyAt + REQUEST_GRACE_MS - now, answering(socket))
    }
    let ended = false
    for (const socket of httpSockets.keys()) {
      const answer = socket._httpMessage
      if (answer == null) continue
      // Once this answer is written ('close': its socket let go, or the reader went away), its connection may be
      // idle, and is closed then rather than after the keep-alive timeout its answer announced; or the answer to
      // a request pipelined behind it takes its turn, and is watched in its turn.
      if (!watched.has(answer)) {
        watched.add(answer)
        answer.once('close', () => { server.closeIdleConnections() })
      }
      // Node's sweep destroys a connection whose answer was ended (end() called) but not yet let go: its bytes may
      // still be queued, and answers to requests pipelined behind it wait in a queue of Node's that the sweep
      // does not look at. It runs when the answer's 'close' brings this function back.
      if (answer.writableEnded) ended = true
    }
    if (!ended) sweep()
  }
}
