/**
 * Request logging at production cost: one line per request, written when it
 * completes (method, URL as sent, status, time, request id, and for a refusal its
 * problem type and detail), instead of Fastify's two
 * (incoming + completed) with full serialized request and response objects.
 * Measured on the bench machine, each of Fastify's lines cost about as much
 * as the whole of a bare hello-world request. Where the lines go is
 * log-output.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { constants } from 'node:http2'
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { http2Stream } from './http2-stream.js'

/** Why a request was refused (4xx): told on its completion line rather than a line of its own. */
export interface Refusal { readonly problem: string, readonly detail: string }

const refusals = new WeakMap<FastifyRequest, Refusal>()

/**
 * The most of a URL or a refusal's detail a line carries. A request line may
 * be 16 KiB, and so may a detail that names a parameter: a longer log line is
 * split by collectors (Docker's json-file at 16 KiB), and no longer parses.
 */
const LOGGED_TEXT_LIMIT = 2048

function clipped (text: string): string {
  if (text.length <= LOGGED_TEXT_LIMIT) return text
  // Not between the two halves of a surrogate pair, which would leave half a character.
  const end = /[\uD800-\uDBFF]/.test(text[LOGGED_TEXT_LIMIT - 1]!) ? LOGGED_TEXT_LIMIT - 1 : LOGGED_TEXT_LIMIT
  return `${text.slice(0, end)}… (${text.length} characters)`
}

export function noteRefusal (request: FastifyRequest, refusal: Refusal): void {
  refusals.set(request, refusal)
}

const { NGHTTP2_NO_ERROR } = constants
const LEFT_BEFORE = 'connection closed before the answer'
const LEFT_DURING = 'connection closed while the answer was sent'

/**
 * Whether the client was gone when its answer was done with. Over HTTP/1,
 * Node finishes an answer whose connection the client closed in the middle of
 * it (a large page it stopped reading) as it finishes one written whole: only
 * the destroyed connection tells them apart (one written whole finishes with
 * its connection still open, also one that then closes it; light-my-request's
 * stand-in is never destroyed). Over HTTP/2, Node finishes every answer when
 * its stream closes, also one reset by its client before anything was sent:
 * only the stream's reset code tells them apart.
 */
function clientGone (raw: IncomingMessage): boolean {
  const stream = http2Stream(raw)
  if (stream === undefined) return raw.socket?.destroyed === true
  return (stream.rstCode ?? NGHTTP2_NO_ERROR) !== NGHTTP2_NO_ERROR
}

/**
 * Marks an HTTP/2 request whose answer's stream failed, and was told so:
 * Node then resets the stream, and its close brings requestCompleted, which
 * would tell a departure that never was. Set only on such a failure, so it
 * costs the other requests nothing.
 */
const STREAM_FAILURE_TOLD = Symbol('resourcery.streamFailureTold')
interface RawWithFailure extends IncomingMessage { [STREAM_FAILURE_TOLD]?: true }

export class OneLineLogController extends LogController {
  constructor () {
    super({ requestIdLogLabel: 'requestId' })
  }

  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if ((request.raw as RawWithFailure)[STREAM_FAILURE_TOLD] === true) return
    if (error !== null && error !== undefined) reply.log.error({ ...requestLine(request, reply), err: error }, 'request errored')
    else if (!clientGone(request.raw)) reply.log.info(requestLine(request, reply), 'request completed')
    else if (reply.raw.headersSent) reply.log.info(requestLine(request, reply), LEFT_DURING)
    // Only over HTTP/2: an HTTP/1 answer never begun never finishes, and tellDeparture writes its line.
    else reply.log.info(unansweredLine(request, reply), LEFT_BEFORE)
  }

  /**
   * An answer sent as a stream (a file of the docs UI) that stopped after its
   * headers went: in place of Fastify's own line, which has neither the
   * method, the URL nor the time. Over HTTP/1 no other line comes for it;
   * over HTTP/2 its stream's close brings requestCompleted's, so only a
   * failure of the stream itself is told here, in its place.
   */
  override streamError (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
    const overHttp2 = http2Stream(request.raw) !== undefined
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE') {
      if (!overHttp2) reply.log.info(requestLine(request, reply), LEFT_DURING)
      return
    }
    if (overHttp2) (request.raw as RawWithFailure)[STREAM_FAILURE_TOLD] = true
    reply.log.warn({ ...requestLine(request, reply), err: error }, 'answer cut short: its stream failed')
  }
}

function requestLine (request: FastifyRequest, reply: FastifyReply): Record<string, unknown> {
  const refusal = refusals.get(request)
  return {
    method: request.method,
    url: clipped(request.originalUrl),
    statusCode: reply.statusCode,
    responseTime: reply.elapsedTime,
    ...(refusal === undefined ? {} : { problem: refusal.problem, detail: clipped(refusal.detail) })
  }
}

/** A request's line without the status that was never sent. */
function unansweredLine (request: FastifyRequest, reply: FastifyReply): Record<string, unknown> {
  const { statusCode: _notSent, ...line } = requestLine(request, reply)
  return line
}

/** The answer sent on its socket to a request whose body Node's parser refused as it arrived (parser-refusal.ts). */
interface SocketAnswer extends Refusal { readonly statusCode: number }

/**
 * Each raw message's reply, so that a refusal of a body still arriving can be
 * its request's answer. A property rather than a WeakMap: a WeakMap entry for
 * every request (its value reaching back to its key) made a GET one cost 1.6
 * times the CPU in bench:ab, in every pair; the property costs nothing that
 * bench:ab can tell from noise.
 */
const REPLY = Symbol('resourcery.reply')
interface RawWithReply extends IncomingMessage { [REPLY]?: FastifyReply }
const socketAnswers = new WeakMap<FastifyRequest, SocketAnswer>()

/** The reply to the request whose raw message `raw` is. */
export const replyToRaw = (raw: IncomingMessage): FastifyReply | undefined => (raw as RawWithReply)[REPLY]

/** Tells `request`'s line that it was answered on its socket, below Fastify: by that status, not Fastify's. */
export function noteSocketAnswer (request: FastifyRequest, answer: SocketAnswer): void {
  socketAnswers.set(request, answer)
}

/**
 * Gives a request whose client closes the connection before its answer is
 * sent (while its body is read, or while its handler works) its line too:
 * Fastify writes a line when the answer finishes, which an answer with no
 * connection never does. The line has no status, as none was sent, and its
 * time is when the client left. (One that leaves once its answer has begun
 * has Fastify's line, which says so: requestCompleted and clientGone when the
 * answer finishes, streamError when a streamed one stops. So does every
 * HTTP/2 request, whose answer Node finishes when its stream closes.)
 * A request whose body the parser refused (a malformed chunk, a body that did
 * not arrive in time) was answered on its socket instead, and its line says
 * with what. Every request's raw message points to its reply for that: the
 * parser can refuse a body in the same read as its head, before this hook
 * could tell whether the body had all arrived (`complete` is set only once
 * the read is parsed).
 */
export function logUnanswered (app: FastifyInstance): void {
  app.addHook('onRequest', function watchForDeparture (request, reply, done) {
    (request.raw as RawWithReply)[REPLY] = reply
    // Over HTTP/2 every answer finishes when its stream closes, and Fastify's line says how (requestCompleted).
    if (http2Stream(request.raw) === undefined) reply.raw.on('close', tellDeparture)
    done()
  })
}

/**
 * An HTTP/1 response's close: one function for every request, which finds the
 * reply through the response's request (`res.req`), rather than a closure and
 * a `once` wrapper made for each request on the hot path (bench:ab: 8% more
 * GET one requests a second).
 */
function tellDeparture (this: ServerResponse): void {
  const reply = replyToRaw(this.req)
  // Once an answer has begun, Fastify's line comes: when it finishes, or when its stream stops (streamError).
  if (reply === undefined || reply.sent || this.headersSent) return
  const line = unansweredLine(reply.request, reply)
  const answer = socketAnswers.get(reply.request)
  if (answer === undefined) reply.log.info(line, LEFT_BEFORE)
  else reply.log.info({ ...line, statusCode: answer.statusCode, problem: answer.problem, detail: clipped(answer.detail) }, 'request refused while its body was read')
}
