/**
 * One error path for the whole service: the error handler, the not-found
 * handler and the raw-socket client-error handler all answer with RFC 9457
 * problem details, and unexpected errors are logged, never shown. (app.ts
 * installs answerUnknownPaths after rate limiting, so unknown paths are limited too.)
 */
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import fp from 'fastify-plugin'
import { annotationOf, BodyTooLarge, MalformedBody, RouteNotFound, UnknownVersion, UnsupportedMediaType } from '../errors.js'
import { PROBLEM_MEDIA_TYPE, Problem, problemBody, toProblem } from '../http/problem.js'
import { instanceOf } from '../http/instance.js'
import { parserRefusal, type ParserError } from '../http/parser-refusal.js'
import { noteRefusal, noteSocketAnswer, replyToRaw } from '../http/request-log.js'
import { afterOwedAnswers, bodyBeingRead, type HttpSocket } from '../http/socket-answers.js'
import { malformedPath, overlongSegment } from '../http/unroutable-path.js'
import { API_VERSIONS, CURRENT_VERSION } from '../http/versions.js'
import type { HeaderSet } from './security.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Body properties that are read-only on this route, so validation can say so. */
    readOnly?: readonly string[]
    /** Request media types this route accepts, for 415 and Accept-Post / Accept-Patch. */
    accepts?: readonly string[]
  }
}

/** Fastify's own client errors, restated so the detail tells the client what to send instead. */
function restate (request: FastifyRequest, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const accepts = request.routeOptions.config?.accepts ?? ['application/json']
    const given = request.headers['content-type']
    return new UnsupportedMediaType(`${given === undefined ? 'a body without Content-Type' : `Content-Type ${given}`} is not accepted here; send ${accepts.join(' or ')}`)
  }
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new BodyTooLarge(`the body is larger than the limit of ${request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit} bytes`)
  }
  return error
}

/**
 * Node's error for a connection that closed while the body was read: the
 * client's doing, a refusal rather than an unexpected error to log with its
 * stack, and an answer no one is left to read (request-log.ts logs its line).
 */
function closedWhileRead (error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ECONNRESET' && (error as Error).message === 'aborted'
}

function sendProblem (request: FastifyRequest, reply: FastifyReply, original: unknown): FastifyReply {
  const error = closedWhileRead(original) ? new MalformedBody('the connection closed before the whole body arrived') : restate(request, original)
  const answer = toProblem(error, {
    // The path as the client sent it: `/projects` with `Api-Version: 1` is rewritten to `/v1/projects` for routing only.
    instance: instanceOf(request.originalUrl),
    requestId: request.id,
    readOnly: request.routeOptions.config?.readOnly
  })
  if (answer.unexpected) request.log.error({ err: error }, 'unexpected error')
  else noteRefusal(request, { problem: answer.body.type, detail: answer.body.detail })
  if (answer.status === 415 || answer.status === 405) {
    const accepts = request.routeOptions.config?.accepts
    if (accepts !== undefined && request.method === 'POST') reply.header('accept-post', accepts.join(', '))
    if (accepts !== undefined && request.method === 'PATCH') reply.header('accept-patch', accepts.join(', '))
  }
  for (const [name, value] of Object.entries(annotationOf(error).headers ?? {})) reply.header(name, value)
  return reply.code(answer.status).header('cache-control', 'no-store').type(PROBLEM_MEDIA_TYPE).send(answer.body)
}

/** The 404 for a path no route has: an unknown version, or nothing there. */
function unknownPath (request: FastifyRequest): Error {
  const path = instanceOf(request.url)
  const version = /^\/v([^/]+)(\/|$)/.exec(path)?.[1]
  if (version !== undefined && !API_VERSIONS.includes(version)) {
    return new UnknownVersion(`${requestedVersion(request, version)} does not exist; available: ${API_VERSIONS.join(', ')}`)
  }
  return new RouteNotFound(`nothing is at ${request.method} ${path}${versionHint(request, path, version)}`)
}

export function notFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(request, reply, unknownPath(request))
}

/**
 * Unknown paths (and unknown versions) answer 404 problems, counted by the
 * rate limiter as every /v1 request is; call once rate limiting exists. They
 * are answered in preParsing, after the hooks every answer gets and before
 * the body is read: whatever the body, nothing is there to take it (a 415 or
 * a 400 for its JSON would send the client fixing the wrong thing), and
 * Fastify's own check that a QUERY has a Content-Type runs with the parsing.
 * The one target the router cannot hold, `OPTIONS *`, is answered here too.
 */
export function answerUnknownPaths (app: FastifyInstance, serverAllow: () => string): void {
  const countUnknownPath = app.rateLimit()
  app.addHook('preParsing', function refuseUnknownPath (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) {
    if (!request.is404) {
      done(null, payload)
      return
    }
    // A 429 is thrown with its headers set; otherwise the count's headers are set and the 404 follows.
    countUnknownPath.call(app, request, reply).then(() => {
      // `OPTIONS *` has no path for the router to find: it asks what the server as a whole allows.
      if (request.method === 'OPTIONS' && request.url === '*') reply.code(204).header('allow', serverAllow()).send()
      else done(unknownPath(request))
    }, done)
  })
  // The not-found context's handler, which the hook above leaves nothing to do; Fastify's own would answer plain JSON.
  app.setNotFoundHandler(notFound)
}

/**
 * For a path that would exist under the current version (`/projects/1`, sent
 * without `Api-Version`), says how to ask for it: the 404 alone reads as if
 * the resource were missing. Only a refused request pays for the lookup.
 */
function versionHint (request: FastifyRequest, path: string, pathVersion: string | undefined): string {
  if (pathVersion !== undefined || request.headers['api-version'] !== undefined) return ''
  const versioned = `/v${CURRENT_VERSION}${path === '/' ? '' : path}`
  return request.server.findRoute({ method: 'GET', url: versioned }) === null ? '' : `; paths begin with the API version (${versioned}), or send Api-Version: ${CURRENT_VERSION}`
}

/**
 * The unknown version as the client asked for it. A header's value is shown
 * as sent (rewriteVersionedUrl routes anything but digits to `/vunknown`), cut
 * short so a long header cannot swell the problem.
 */
function requestedVersion (request: FastifyRequest, pathVersion: string): string {
  const header = request.headers['api-version']
  if (request.url === request.originalUrl || typeof header !== 'string') return `API version ${pathVersion}`
  const shown = header.length > 40 ? `${header.slice(0, 40)}…` : header
  return `Api-Version ${JSON.stringify(shown)}`
}

/**
 * Paths the router refuses (not valid percent-encoding, a segment past
 * MAX_PATH_PARAMETER_LENGTH) that the check before routing let through
 * (plugins/unroutable.ts). Fastify hands them to its frameworkErrors option
 * with no route, so no hook runs: the headers every answer carries are set here.
 */
export function routingErrorHandler (securityHeaders: HeaderSet) {
  return function routingError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    reply.header('x-request-id', request.id)
    for (const [name, value] of securityHeaders) reply.header(name, value)
    return sendProblem(request, reply, error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? overlongSegment() : malformedPath())
  }
}

/**
 * Errors Node's HTTP parser meets before Fastify sees a request (malformed
 * request line, headers too large, timeouts) are answered on the raw socket,
 * where no hook runs: the problem (parser-refusal.ts says which), and the
 * headers every answer carries that do not need a request (there is none to
 * count). Each is logged, as a refused request is, under the request id its
 * answer shows. Where what the parser refused is the body of a request under
 * way (a malformed chunk, a body that did not arrive in time), the answer is
 * that request's: its id, its path, its one log line. Requests read before it
 * on the connection (pipelined) are answered first: the parser can meet the
 * error in the same read as them, before their handlers finish, and a refusal
 * that closed the connection then lost their answers, a committed write's 201
 * among them. Fastify calls this with the app as `this`.
 */
export function clientErrorHandler (securityHeaders: HeaderSet) {
  // A parser that failed fails again on every later read, and the connection is refused once.
  const refused = new WeakSet<Socket>()
  return function clientError (this: FastifyInstance, error: ParserError, socket: Socket): void {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    if (refused.has(socket)) return
    refused.add(socket)
    // What the parser refused may be the body of a request already under way: the refusal is that request's answer,
    // unless it was answered before its body was all read (a 401, a 404), and a second answer would be one too many.
    const arriving = bodyBeingRead(socket as HttpSocket)
    const reading = arriving === undefined ? undefined : replyToRaw(arriving)
    if (reading?.sent === true) {
      socket.destroy()
      return
    }
    const { status, detail, target } = parserRefusal(error)
    const requestId = reading?.request.id ?? crypto.randomUUID()
    const problem = problemBody(status, detail, { instance: instanceOf(reading?.request.originalUrl ?? target ?? ''), requestId })
    // A client that ended its side in the middle of a body may have left or may still read (a half-close looks the same):
    // its request's line says it left, as for a client gone while its handler works.
    if (reading !== undefined) {
      if (error.code !== 'HPE_INVALID_EOF_STATE') noteSocketAnswer(reading.request, { statusCode: status, problem: problem.type, detail })
    } else this.log.info({ requestId, statusCode: status, problem: problem.type, detail }, 'request refused before it could be read')
    const body = JSON.stringify(problem)
    const headers = [
      ['content-type', PROBLEM_MEDIA_TYPE], ['content-length', String(Buffer.byteLength(body))], ['cache-control', 'no-store'], ['x-request-id', requestId],
      ...securityHeaders, ['connection', 'close']
    ]
    const refusal = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, ...headers.map(([name, value]) => `${name}: ${value}`), '', body].join('\r\n')
    afterOwedAnswers(socket, () => {
      if (socket.writable) socket.end(refusal)
      else socket.destroy()
    })
  }
}

async function problems (app: FastifyInstance): Promise<void> {
  app.addSchema(Problem)
  app.setErrorHandler(function handleError (error, request, reply) {
    return sendProblem(request, reply, error)
  })
}

export default fp(problems, { name: 'resourcery-problems' })
