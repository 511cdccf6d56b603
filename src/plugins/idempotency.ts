/**
 * Idempotency-Key on POST (the IETF httpapi draft, as Stripe does it): the
 * first request under a key runs, per credential; a retry with the same key
 * and body within 24 h gets its answer again with `Idempotent-Replayed: true`
 * and creates nothing. Another body under the same key is 422; a retry while
 * the first still runs is 409. A server-side failure (5xx) that created
 * nothing forgets the key so a retry runs again.
 *
 * A create marks the key with its record in its own transaction, and that
 * record is the answer: a retry is answered from it as the create was (201,
 * Location, ETag, the record as created), also after a crash that lost the
 * first answer. Storing the created answer as well was a third durable write
 * per create, after the claim and the create, and the client waited for its
 * commit. Any other answer (a refusal: 400, 409…) creates nothing, and is
 * stored durably before it is sent, to be replayed as it was.
 */
import { hash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { firstRequestRunning, IdempotencyKeyReused, invalid } from '../errors.js'
import { addRouteHook } from '../http/route-hooks.js'
import type { HeldKey } from '../store/idempotency.js'
import type { StoredRecord } from '../store/store.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POST routes that honour Idempotency-Key. */
    idempotent?: boolean
  }
  interface FastifyRequest {
    /**
     * The Idempotency-Key this request holds (null: none): a create passes it
     * to the store, which marks it with the new record in the same
     * transaction. `committed`: the record the key's create made, by an
     * earlier request (the create answers with it) or by this one.
     */
    idempotencyKey: { readonly held: HeldKey, readonly committed?: StoredRecord } | null
  }
}

const HOUR_MS = 3_600_000
const RETENTION_MS = 24 * HOUR_MS
/** A record left running this long belongs to a process that died mid-request. */
const STALE_MS = 5 * 60_000
const KEY = /^[\x21-\x7e]{1,255}$/
/** Headers a replay must repeat for the client to see the same answer. */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag', 'last-modified', 'preference-applied']

/** What makes two requests "the same" under one key: method, URL and parsed body. */
export function requestFingerprint (method: string, url: string, body: unknown): string {
  return hash('sha256', `${method} ${url}\n${JSON.stringify(body ?? null)}`, 'base64url')
}

async function idempotency (app: FastifyInstance): Promise<void> {
  const { idempotency: records } = app.store

  async function claimIdempotencyKey (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const key = request.headers['idempotency-key']
    if (key === undefined) return
    if (typeof key !== 'string' || !KEY.test(key)) {
      throw invalid([{ in: 'header', pointer: '/Idempotency-Key', detail: 'must be 1 to 255 visible ASCII characters' }])
    }
    const credential = request.principal?.credential ?? ''
    const now = new Date()
    const print = requestFingerprint(request.method, request.url, request.body)
    const claim = await records.claim(credential, key, print, {
      now, expiresAt: new Date(now.getTime() + RETENTION_MS), staleBefore: new Date(now.getTime() - STALE_MS)
    })
    if (claim.claimed) {
      request.idempotencyKey = { held: claim.held, ...(claim.committed === undefined ? {} : { committed: claim.committed }) }
      if (claim.committed !== undefined) reply.header('idempotent-replayed', 'true')
      return
    }
    const { existing } = claim
    if (existing.fingerprint !== print) throw new IdempotencyKeyReused('this Idempotency-Key was used with a different request; use a new key for a new request')
    if (existing.response === undefined) throw firstRequestRunning()
    for (const [name, value] of Object.entries(existing.response.headers)) reply.header(name, value)
    return await reply.code(existing.response.status).header('idempotent-replayed', 'true').send(existing.response.body === '' ? undefined : existing.response.body)
  }

  async function rememberResponse (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const holding = request.idempotencyKey
    if (holding === null) return payload
    request.idempotencyKey = null
    // The key's create committed: its record answers every retry, with nothing more to store.
    if (holding.committed !== undefined) return payload
    const claim = holding.held
    if (reply.statusCode >= 500) {
      await records.release(claim.subject, claim.key)
      return payload
    }
    const headers: Record<string, string> = {}
    for (const name of REPLAYED_HEADERS) {
      const value = reply.getHeader(name)
      if (value !== undefined) headers[name] = String(value)
    }
    await records.complete(claim.subject, claim.key, { status: reply.statusCode, headers, body: typeof payload === 'string' ? payload : '' })
    return payload
  }

  app.decorateRequest('idempotencyKey', null)
  // Only the routes that honour Idempotency-Key carry its hooks.
  app.addHook('onRoute', function honourIdempotencyKeys (route) {
    if (route.config?.idempotent !== true) return
    addRouteHook(route, 'preHandler', claimIdempotencyKey)
    addRouteHook(route, 'onSend', rememberResponse)
  })

  // Expired keys are purged hourly; the timer never keeps the process alive.
  const purge = async (): Promise<void> => {
    await records.purge(new Date()).catch((error: unknown) => app.log.warn({ err: error }, 'could not purge expired idempotency keys'))
  }
  const timer = setInterval(purge, HOUR_MS)
  timer.unref()
  app.addHook('onReady', purge)
  app.addHook('onClose', async function stopPurging () { clearInterval(timer) })
}

export default fp(idempotency, { name: 'resourcery-idempotency', dependencies: ['resourcery-store'] })
