/**
 * The answers a connection owes. Node keeps them on the socket: the one being
 * written as `_httpMessage` (the field its own idle sweep reads) and the
 * answers to requests pipelined behind it in a queue that hands the next one
 * over as each is written. Both the drain (idle-sweep.ts) and the refusal of
 * a request Node could not read (problems.ts) must wait for them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** A connection's socket, the answer it is sending, and its parser, whose `incoming` is the last request read on it (Node's own fields). */
export interface HttpSocket extends Socket {
  _httpMessage?: ServerResponse | null
  parser?: { incoming?: IncomingMessage | null } | null
}

/** The request whose body the connection is still reading, if any: only the last one begun can be. */
export function bodyBeingRead (socket: HttpSocket): IncomingMessage | undefined {
  const latest = socket.parser?.incoming
  return latest == null || latest.complete ? undefined : latest
}

/**
 * Runs `then` once every answer owed on `socket` to a request read whole is
 * written or abandoned. An answer's 'close' comes after Node has handed the
 * socket to the next queued answer, so each is waited for in its turn, in
 * order. One whose request is still being read does not hold `then` back:
 * what went wrong is in its body, which will never come whole, so it could
 * not be answered first.
 */
export function afterOwedAnswers (socket: HttpSocket, then: () => void): void {
  const answer = socket._httpMessage
  if (answer == null || !answer.req.complete) then()
  else answer.once('close', () => { afterOwedAnswers(socket, then) })
}
