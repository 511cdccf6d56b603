/**
 * The status for an error of Node's HTTP parser, which meets a request before
 * Fastify does. Node bounds the request line and the header fields together
 * (maxHeaderSize, 16 KiB) and reports both overflows alike, so a target past
 * the bound was told 431 Request Header Fields Too Large: what is too long
 * there is the URI, 414 (RFC 9110 §15.5.15). Node hands over the chunk it was
 * parsing (rawPacket) and where in it the parser stopped (bytesParsed), and
 * the line holding that point says which it was: a request line starts with a
 * method, a space and a target, or ends ` HTTP/1.1`; a header line can do
 * neither (a field name holds no space). A target that reached the server over
 * several reads, and overflowed in one that neither starts nor ends its line,
 * cannot be told from a long header and stays 431.
 */
export interface ParserError extends Error {
  readonly code?: string
  /** A Buffer from Node (Fastify's types call it the JSON form of one). */
  readonly rawPacket?: unknown
  readonly bytesParsed?: number
}

const LF = 0x0a
/** A method, then an origin-form (`/…`), asterisk-form or absolute-form target, or a CONNECT authority. */
const REQUEST_LINE_HEAD = /^[A-Z]+ (?:[/*]|[A-Za-z][A-Za-z0-9+.-]*:)/
const REQUEST_LINE_TAIL = /^ HTTP\/\d(?:\.\d)?\r?$/

function overflowedInRequestLine ({ rawPacket, bytesParsed }: ParserError): boolean {
  if (!Buffer.isBuffer(rawPacket) || bytesParsed === undefined || bytesParsed <= 0 || bytesParsed > rawPacket.length) return false
  const lineStart = rawPacket.lastIndexOf(LF, bytesParsed - 1) + 1
  const nextLf = rawPacket.indexOf(LF, bytesParsed)
  const lineEnd = nextLf === -1 ? rawPacket.length : nextLf
  // The request line is ASCII up to its target's first characters; latin1 reads any byte as one character.
  const head = rawPacket.toString('latin1', lineStart, Math.min(lineStart + 64, bytesParsed))
  const tail = rawPacket.toString('latin1', bytesParsed, Math.min(lineEnd, bytesParsed + 16))
  return REQUEST_LINE_HEAD.test(head) || REQUEST_LINE_TAIL.test(tail)
}

export function parserErrorStatus (error: ParserError): number {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408
  if (error.code !== 'HPE_HEADER_OVERFLOW') return 400
  return overflowedInRequestLine(error) ? 414 : 431
}
