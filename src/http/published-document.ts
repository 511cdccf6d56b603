/**
 * A document the process serves unchanged for its whole life (the OpenAPI
 * document, as JSON and as YAML, and the documentation UI's scripts and style
 * sheets, docs-assets.ts): made once, at its first request or when the
 * server prepares it, with its tag and its codings as they are asked for. Serializing the 800 KB document
 * took about 15 ms of the event loop for every request, 25 with gzip, on a
 * route anyone may call without a credential: a few dozen requests a second
 * would have stalled the service. Now a request costs the write, and a client
 * that has it revalidates with If-None-Match for a 304. Its tag is weak, so
 * If-Match holds only as `*` (412 otherwise), as on a list.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { bodyTag, documentIfMatchFailed, failsOnWeakTag, tagged, type EntityTag } from './conditional.js'
import { keptBody, sendKept, type KeptBody } from './content-coding.js'
import { instanceOf } from './instance.js'

/** Public, the same for every caller; checked again on each use, since a deploy changes it. */
const CACHE_CONTROL = 'public, no-cache'

interface Published extends KeptBody {
  readonly tag: EntityTag
}

export interface PublishedDocument {
  (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>
  /** Makes the document now, before any request asks for it (which then waits for nothing). */
  prepare (): Promise<void>
}

/**
 * Serves what `make` returns, made at the first request (or by `prepare`), as
 * `type`. Requests that come while it is being made wait for that one making;
 * one that fails is a 500, and the next request (or `prepare`) tries again.
 */
export function publishedDocument (type: string, make: () => string | Buffer | Promise<string | Buffer>): PublishedDocument {
  let making: Promise<Published> | undefined
  async function made (): Promise<Published> {
    // Kept as UTF-8 bytes: one character past Latin-1 (the document's `…` and `→`) makes V8 hold a whole
    // string at two bytes a character, 2 MB of heap for the 1 MB document, encoded again for every answer.
    const content = await make()
    const body = typeof content === 'string' ? Buffer.from(content) : content
    return { ...keptBody(body), tag: bodyTag(body) }
  }
  async function current (): Promise<Published> {
    making ??= made()
    try {
      return await making
    } catch (error) {
      making = undefined
      throw error
    }
  }
  const sendPublished = async function sendPublished (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const published = await current()
    if (failsOnWeakTag(request.headers['if-match'])) throw documentIfMatchFailed(instanceOf(request.url))
    reply.header('cache-control', CACHE_CONTROL)
    if (tagged(request, reply, published.tag)) return await reply.code(304).send()
    return await sendKept(request, reply.type(type), published)
  }
  return Object.assign(sendPublished, { prepare: async () => { await current() } })
}
