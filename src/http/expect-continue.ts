/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1): the client asks whether to send
 * its body. Node answers 100 Continue as soon as the headers arrive, so a
 * request about to be refused (no credential, over its rate limit or the body
 * limit, a media type the route does not take) uploaded its whole body first.
 * Here 100 Continue goes out when the body is first read, after every check
 * that does not need it; a refusal before that is the final answer, and Node
 * then closes the connection, since the client may still send the body.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'

export function continueWhenBodyIsRead (server: Server): void {
  server.on('checkContinue', function deferContinue (request: IncomingMessage, response: ServerResponse) {
    // Fastify's body parsers read by listening for 'data', which resumes the stream. So does Node's
    // discarding of an unread body after a refusal, when 100 Continue must no longer be sent.
    request.once('resume', () => {
      if (!response.headersSent) response.writeContinue()
    })
    server.emit('request', request, response)
  })
}
