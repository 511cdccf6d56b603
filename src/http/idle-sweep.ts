/**
 * What server.close() closes at once: the connections that are neither
 * sending a request nor waiting for an answer, as Node documents for
 * closeIdleConnections(). Node's own sweep differs from that in two ways,
 * each of which cost a shutdown:
 * - It counts a connection idle once its answer's end() was called, while
 *   that answer's bytes may still be queued for a slow reader (a large list
 *   to a phone on a poor network). The answer was cut short, with nothing in
 *   the log to say so: a 20 MB list reached its reader as its first 4 MB.
 *   Here the sweep waits until every such answer is written.
 * - It never counts idle a connection that has sent nothing yet (it dates
 *   such a connection as a request begun, so that the headers deadline ends
 *   it), and close() stops the timer that enforces that deadline. A browser's
 *   preconnect, or any client that opened a connection and sent nothing, held
 *   every shutdown until its deadline, which then exited 1 "with requests
 *   still open". Here such a connection is closed once it has been silent for
 *   a moment, the time a client that is about to send its request needs to.
 * Connections idle while an answer is still being written stay open a little
 * longer; a request on one is refused as any that arrives during the drain.
 */
import type { Server as HttpServer, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Server as TlsServer } from 'node:tls'

/** A connection's socket and the answer it is sending: the field Node's own sweep reads to tell an idle connection. */
interface HttpSocket extends Socket {
  _httpMessage?: ServerResponse | null
}

/** How long a connection may have sent nothing, once the drain began, before it is closed as idle. */
const SILENT_GRACE_MS = 1000

/** The open sockets `server` emits with `event`, each with when it became ready for a request. */
function openSockets<T extends Socket> (server: HttpServer, event: 'connection' | 'secureConnection', onOpen: (socket: T) => void): Map<T, number> {
  const sockets = new Map<T, number>()
  server.on(event, (socket: T) => {
    sockets.set(socket, performance.now())
    socket.once('close', () => sockets.delete(socket))
    onOpen(socket)
  })
  return sockets
}

/** Answers whose end() was called but whose bytes are not all written yet. */
function answersStillFlushing (sockets: Iterable<HttpSocket>): ServerResponse[] {
  const flushing: ServerResponse[] = []
  for (const socket of sockets) {
    const answer = socket._httpMessage
    if (answer != null && answer.writableEnded && !answer.writableFinished) flushing.push(answer)
  }
  return flushing
}

/** Closes `socket` in `delayMs` (at once if not positive) if the client has sent nothing on it by then. */
function closeIfSilentIn (socket: Socket, delayMs: number): void {
  const closeIfSilent = (): void => { if (socket.bytesRead === 0) socket.destroy() }
  if (delayMs <= 0) closeIfSilent()
  else setTimeout(closeIfSilent, delayMs).unref()
}

/** Makes `server`'s idle sweep (run by close()) spare answers still being written and close silent connections. */
export function sweepIdleOnceFlushed (server: HttpServer): void {
  let draining = false
  // A connection that becomes one during the drain (its TLS handshake ends) is given the same moment to speak.
  const whileDraining = (socket: Socket): void => { if (draining) closeIfSilentIn(socket, SILENT_GRACE_MS) }
  const connections = openSockets<Socket>(server, 'connection', whileDraining)
  // Over TLS (HTTPS, and HTTP/1 on the HTTP/2 server), HTTP runs on the socket 'secureConnection' brings: one that
  // has read nothing completed its handshake and sent no request. A TCP connection that read nothing sent no handshake.
  const httpSockets = server instanceof TlsServer ? openSockets<HttpSocket>(server, 'secureConnection', whileDraining) : connections
  const sweep = server.closeIdleConnections.bind(server)
  server.closeIdleConnections = function closeIdleConnectionsOnceFlushed () {
    const flushing = answersStillFlushing(httpSockets.keys())
    if (flushing.length > 0) {
      // 'close' comes once the answer is written and its socket let go (or the reader went away); the sweep then
      // closes its now idle connection with the others. A reader that never reads is ended by the shutdown deadline.
      let unwritten = flushing.length
      for (const answer of flushing) {
        answer.once('close', () => {
          if (--unwritten === 0) server.closeIdleConnections()
        })
      }
      return
    }
    draining = true
    const now = performance.now()
    for (const sockets of new Set([connections, httpSockets])) {
      for (const [socket, readyAt] of sockets) closeIfSilentIn(socket, readyAt + SILENT_GRACE_MS - now)
    }
    sweep()
  }
}
