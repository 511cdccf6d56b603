/**
 * The Host header field, which RFC 9112 §3.2 makes a server refuse with 400
 * when an HTTP/1.1 request lacks it, and any HTTP/1 request that sends it more
 * than once or with a value that is no authority. Node refuses only the first
 * itself, below every hook, with an empty 400 that is no problem: the server
 * is built with requireHostHeader off (transport.ts) and all three are
 * recognised here, before routing (plugins/unroutable.ts).
 */
import type { IncomingMessage } from 'node:http'
import { invalid } from '../errors.js'

/**
 * uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986 §3.2.2): an IP literal in
 * brackets, or a reg-name (which an IPv4 address also is), possibly empty.
 */
const AUTHORITY = /^(?:\[[0-9A-Fa-f:.]+\]|\[v[0-9A-Fa-f]+\.[\w.~!$&'()*+,;=:-]+\]|[\w.~!$&'()*+,;=%-]*)(?::[0-9]*)?$/

const refuse = (detail: string): Error => invalid([{ in: 'header', pointer: '/host', detail }])

/** Why `request`'s Host cannot be taken, if it cannot. HTTP/2 names its authority in `:authority` instead. */
export function hostRefusal (request: IncomingMessage): Error | undefined {
  if (request.httpVersionMajor !== 1) return undefined
  const host = request.headers.host
  if (host === undefined) return request.httpVersionMinor === 1 ? refuse('is required in an HTTP/1.1 request (RFC 9112 §3.2)') : undefined
  if (!AUTHORITY.test(host)) return refuse('must be a host name or address, with an optional port (RFC 9110 §7.2)')
  // Node keeps the first of several Host lines and drops the rest: count them from the raw lines.
  let lines = 0
  const raw = request.rawHeaders
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!
    if (name.length === 4 && name.toLowerCase() === 'host') lines++
  }
  return lines > 1 ? refuse(`is given ${lines} times; give it once (RFC 9112 §3.2)`) : undefined
}
