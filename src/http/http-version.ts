/**
 * The protocol versions a request may name. Node's HTTP/1 parser also takes
 * a request line ending `HTTP/2.0`, and one with no version at all (HTTP/0.9's
 * `GET /`), and Node answered both as HTTP/1.1, which neither kind of client
 * reads: RFC 9110 §15.6.6 gives such a version 505, which says what to send
 * instead. HTTP/2 itself arrives through Node's http2 module (HTTP2=1), and
 * is not refused. Recognised before routing (plugins/unroutable.ts).
 */
import type { IncomingMessage } from 'node:http'
import { VersionNotSupported } from '../errors.js'
import { http2Stream } from './http2-stream.js'

/** Why `request`'s protocol version is not served, if it is not. */
export function versionRefusal (request: IncomingMessage): Error | undefined {
  if (request.httpVersionMajor === 1 || http2Stream(request) !== undefined) return undefined
  return new VersionNotSupported(`HTTP/${request.httpVersion} is not supported: send HTTP/1.1`)
}
