/**
 * The answer to bytes Node's HTTP parser cannot read as a request. It meets
 * them before Fastify does, and says only what llhttp found: its code, its
 * reason, the chunk it was parsing (rawPacket) and where in it it stopped
 * (bytesParsed). Fastify's default calls each a 400 "Client Error"; here the
 * status is the one RFC 9110 gives, and the detail says what to send instead.
 *
 * - A request line with a method that is a token but none Node knows is 501
 *   (RFC 9110 §9.1): the server does not implement it. Any other line that
 *   llhttp refused at its start is 400.
 * - A version other than HTTP/1.0 and 1.1 written `HTTP/x.y` is 505
 *   (§15.6.6), and so is the HTTP/2 connection preface on a connection that
 *   speaks HTTP/1.1.
 * - Node bounds the request line and the header fields together
 *   (maxHeaderSize, 16 KiB) and reports both overflows alike: where the line
 *   holding the overflow is the request line, what is too long is the URI,
 *   414 (§15.5.15), not the header fields, 431. A request line starts with a
 *   method, a space and a target, or ends ` HTTP/1.1`; a header line can do
 *   neither (a field name holds no space). A target that reached the server
 *   over several reads, and overflowed in one that neither starts nor ends
 *   its line, cannot be told from a long header and stays 431.
 * - Anything else is 400 with llhttp's own reason ("Invalid header value
 *   char", "Duplicate Content-Length"), which names what is wrong.
 */
import { maxHeaderSize } from 'node:http'

export interface ParserError extends Error {
  readonly code?: string
  /** llhttp's reason, such as "Invalid header token". */
  readonly reason?: string
  /** A Buffer from Node (Fastify's types call it the JSON form of one). */
  readonly rawPacket?: unknown
  readonly bytesParsed?: number
}

export interface ParserRefusal {
  readonly status: number
  readonly detail: string
  /** The request line's target, where the parser read one: the problem's `instance`. */
  readonly target?: string
}

const LF = 0x0a
/** A method, then an origin-form (`/…`), asterisk-form or absolute-form target, or a CONNECT authority. */
const REQUEST_LINE_HEAD = /^[A-Z]+ (?:[/*]|[A-Za-z][A-Za-z0-9+.-]*:)/
const REQUEST_LINE_TAIL = /^ HTTP\/\d(?:\.\d)?\r?$/
/**
 * A whole request line: its method, its target and the digits of its
 * version. llhttp refuses one for a method it does not know (a token, RFC
 * 9110 §9.1, here at most 32 characters long) or a version it does not speak.
 */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}) (\S+) HTTP\/(\d\.\d)\r?$/
/** A TLS record carrying a handshake (type 22, version 3.x): a client that took this port for HTTPS. */
const TLS_HANDSHAKE = [0x16, 0x03]

/** The line of the chunk in which the parser stopped, as latin1 (any byte one character), and where in it it stopped. */
function lineAt ({ rawPacket, bytesParsed }: ParserError): { text: string, offset: number } | undefined {
  if (!Buffer.isBuffer(rawPacket) || bytesParsed === undefined || bytesParsed < 0 || bytesParsed > rawPacket.length) return undefined
  // lastIndexOf reads a negative offset from the end of the buffer: a stop at 0 is the start of the chunk's first line.
  const start = bytesParsed === 0 ? 0 : rawPacket.lastIndexOf(LF, bytesParsed - 1) + 1
  const next = rawPacket.indexOf(LF, bytesParsed)
  return { text: rawPacket.toString('latin1', start, next === -1 ? rawPacket.length : next), offset: bytesParsed - start }
}

function overflowedInRequestLine (error: ParserError): boolean {
  const line = lineAt(error)
  if (line === undefined) return false
  // The request line is ASCII up to its target's first characters.
  return REQUEST_LINE_HEAD.test(line.text.slice(0, Math.min(64, line.offset))) || REQUEST_LINE_TAIL.test(line.text.slice(line.offset, line.offset + 16))
}

function unknownMethod (error: ParserError): ParserRefusal {
  const { rawPacket } = error
  if (Buffer.isBuffer(rawPacket) && rawPacket[0] === TLS_HANDSHAKE[0] && rawPacket[1] === TLS_HANDSHAKE[1]) {
    return { status: 400, detail: 'a TLS handshake reached a port that speaks plain HTTP: use http://, not https://' }
  }
  const [, method, target] = REQUEST_LINE.exec(lineAt(error)?.text ?? '') ?? []
  if (method === undefined) return { status: 400, detail: 'the request could not be read: a request line is a method, a target and the version, as in GET /v1/projects HTTP/1.1' }
  const known = method.toUpperCase() === method ? '' : '; method names are case-sensitive'
  return { status: 501, detail: `the method ${method} is not implemented by this server${known}`, target }
}

function unspokenVersion (error: ParserError): ParserRefusal {
  const [, , target, version] = REQUEST_LINE.exec(lineAt(error)?.text ?? '') ?? []
  // A version Node takes, refused for what follows it (a bare LF): that is what to name.
  if (version === undefined || version === '1.0' || version === '1.1') return unreadable(error)
  return { status: 505, detail: `HTTP/${version} is not supported: send HTTP/1.1`, target }
}

const unreadable = ({ reason }: ParserError): ParserRefusal =>
  ({ status: 400, detail: `the request could not be read: ${reason ?? 'it is not HTTP/1.1'}` })

export function parserRefusal (error: ParserError): ParserRefusal {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, detail: 'the request did not arrive within the time this server waits for one' }
    case 'HPE_HEADER_OVERFLOW':
      return overflowedInRequestLine(error)
        ? { status: 414, detail: `the request line is longer than this server reads (${maxHeaderSize} bytes with the header fields)` }
        : { status: 431, detail: `the header fields are larger than this server reads (${maxHeaderSize} bytes with the request line)` }
    case 'HPE_INVALID_METHOD':
      return unknownMethod(error)
    case 'HPE_INVALID_VERSION':
      return unspokenVersion(error)
    case 'HPE_INVALID_EOF_STATE':
      return { status: 400, detail: 'the connection was ended before the request was complete' }
    case 'HPE_PAUSED_H2_UPGRADE':
      return { status: 505, detail: 'HTTP/2 is not spoken on this connection: send HTTP/1.1 (HTTP/2 is served only over TLS, where enabled)' }
    default:
      return unreadable(error)
  }
}
