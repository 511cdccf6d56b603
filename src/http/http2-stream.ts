import type { IncomingMessage } from 'node:http'
import type { ServerHttp2Stream } from 'node:http2'

/**
 * The HTTP/2 stream a request came on: Node's compatibility layer
 * (Http2ServerRequest) carries it; a request read by the HTTP/1 parser,
 * also one on an HTTP/2 server's HTTP/1 fallback, has none.
 */
export const http2Stream = (raw: IncomingMessage): ServerHttp2Stream | undefined => (raw as IncomingMessage & { stream?: ServerHttp2Stream }).stream
