/**
 * One webhook request: POST the body to the checked address (never another
 * one the name might resolve to by now), no redirects followed, bounded in
 * time, and the response read only for its status and Retry-After: a
 * receiver's body is drained up to MAX_DRAINED_BYTES, then its connection is
 * dropped, so no receiver can keep one busy by answering without end.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import type { ResolvedTarget } from './targets.js'

/** Past this much of a receiver's (unread) response body, the connection is closed rather than drained. */
export const MAX_DRAINED_BYTES = 64 * 1024

export interface SendResult {
  readonly status?: number
  /** Seconds the receiver asked to wait (Retry-After as seconds or an HTTP date). */
  readonly retryAfterSeconds?: number
  readonly error?: string
}

export function retryAfterSeconds (value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000))
}

export interface WebhookRequest {
  readonly headers: Record<string, string>
  readonly body: string
  readonly timeoutMs: number
  /** Aborted when the service stops: the attempt ends at once instead of holding the shutdown. */
  readonly signal?: AbortSignal
}

export async function sendWebhook (url: URL, target: ResolvedTarget, { headers, body, timeoutMs, signal }: WebhookRequest): Promise<SendResult> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all === true) (callback as unknown as (error: null, addresses: Array<{ address: string, family: number }>) => void)(null, [{ ...target }])
    else callback(null, target.address, target.family)
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return await new Promise<SendResult>(resolve => {
    const request = send(url, {
      method: 'POST',
      lookup: pinned,
      timeout: timeoutMs,
      ...(signal === undefined ? {} : { signal }),
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Resourcery-Webhooks/1', ...headers }
    }, (response: IncomingMessage) => {
      // The body is not needed: a short one is drained so the connection can be reused, a long one cut off.
      let drained = 0
      response.on('data', (chunk: Buffer) => {
        drained += chunk.length
        if (drained > MAX_DRAINED_BYTES) response.destroy()
      })
      const header = response.headers['retry-after']
      const wait = retryAfterSeconds(Array.isArray(header) ? header[0] : header, Date.now())
      resolve({ status: response.statusCode ?? 0, ...(wait === undefined ? {} : { retryAfterSeconds: wait }) })
    })
    request.on('timeout', () => { request.destroy(new Error(`no response within ${timeoutMs} ms`)) })
    request.on('error', error => { resolve({ error: signal?.aborted === true ? 'the service stopped before the receiver answered' : error.message }) })
    request.end(body)
  })
}
