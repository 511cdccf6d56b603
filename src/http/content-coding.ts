/**
 * Content coding of a body the service keeps (a remembered list page,
 * list-handler.ts; the OpenAPI document, published-document.ts): negotiated
 * from Accept-Encoding and compressed in one synchronous call, so the coded
 * body can be kept with it and sent again as it is. @fastify/compress, which codes every other response and
 * leaves a response that already has a Content-Encoding alone, pipes each
 * body through a chain of streams and the thread pool: on the bench machine
 * about 1.4 ms of CPU for a 5 KB list, against about 50 µs for one call here.
 * The codings, their order of preference, the size threshold and brotli's
 * settings are the plugin's, as app.ts registers it.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import Negotiator from 'negotiator'
import { BoundedMap } from '../bounded-map.js'
import { addVary } from './vary.js'

/** Bodies smaller than this are sent as they are: coding would save little and cost a round of CPU. */
export const COMPRESSION_THRESHOLD = 1024

export type Coding = 'br' | 'gzip' | 'deflate'

const PREFERRED = ['br', 'gzip', 'deflate', 'identity']

/**
 * negotiator's encodings() with the `preferred` order it takes since 1.0,
 * which breaks ties between codings the client weighs alike (`gzip, br`)
 * as the plugin does; @types/negotiator does not declare the option yet.
 */
type PreferringEncodings = (this: Negotiator, available: readonly string[], options: { readonly preferred: readonly string[] }) => string[]
const encodingsInOrder = Negotiator.prototype.encodings as PreferringEncodings

/**
 * Coding names as the codings are matched: x-gzip is gzip (RFC 9110
 * §8.4.1.3), in an Accept-Encoding list or a Content-Encoding (request-coding.ts).
 */
export const gzipForItsAlias = (codings: string): string => codings.replace(/\bx-gzip\b/gi, 'gzip')

/** The coding an Accept-Encoding value prefers among ours, or 'identity'. */
function preferredCoding (accepted: string): Coding | 'identity' {
  // As the plugin also reads it.
  const negotiator = new Negotiator({ headers: { 'accept-encoding': gzipForItsAlias(accepted) } })
  const [best] = encodingsInOrder.call(negotiator, PREFERRED, { preferred: PREFERRED })
  return (best ?? 'identity') as Coding | 'identity'
}

/** Choices by Accept-Encoding value: browsers send a handful of values, and parsing one costs more than the lookup. */
const choices = new BoundedMap<string, Coding | 'identity'>(100)

/** The coding to send a body of `bytes` in, or undefined to send it as it is. */
export function chosenCoding (headers: IncomingHttpHeaders, bytes: number): Coding | undefined {
  // x-no-compression: the plugin's own opt-out, honoured the same way.
  const accepted = headers['accept-encoding']
  if (bytes < COMPRESSION_THRESHOLD || accepted === undefined || headers['x-no-compression'] !== undefined) return undefined
  const choice = choices.remember(accepted, () => preferredCoding(accepted))
  return choice === 'identity' ? undefined : choice
}

const CODERS: Record<Coding, (body: Buffer) => Buffer> = {
  // @fastify/compress's defaults for brotli: text mode, quality 4 (its default of 11 took 10 ms for 5 KB).
  br: body => brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.length }
  }),
  gzip: body => gzipSync(body),
  deflate: body => deflateSync(body)
}

export const encode = (coding: Coding, body: string | Buffer): Buffer => CODERS[coding](typeof body === 'string' ? Buffer.from(body) : body)

/** A body kept to be sent again, with its codings as they are first asked for. */
export interface KeptBody {
  /** A string (a list page), or UTF-8 bytes (a published document, kept for the life of the process). */
  readonly body: string | Buffer
  readonly bytes: number
  readonly coded: Map<Coding, Buffer>
}

export const keptBody = (body: string | Buffer): KeptBody => ({ body, bytes: Buffer.byteLength(body), coded: new Map() })

/** Sends `kept` in the coding the request prefers, coding it once per coding (the caller has set its type). */
export async function sendKept (request: FastifyRequest, reply: FastifyReply, kept: KeptBody): Promise<FastifyReply> {
  if (kept.bytes >= COMPRESSION_THRESHOLD) addVary(reply, ['Accept-Encoding'])
  const coding = chosenCoding(request.headers, kept.bytes)
  if (coding === undefined) return await reply.send(kept.body)
  let coded = kept.coded.get(coding)
  if (coded === undefined) {
    coded = encode(coding, kept.body)
    kept.coded.set(coding, coded)
  }
  return await reply.header('content-encoding', coding).send(coded)
}
