/**
 * Public keys of an external issuer from its JWKS URL: cached by `kid` for up to
 * MAX_AGE_MS, refetched when an unknown `kid` appears (key rotation) but at most once per
 * REFETCH_INTERVAL_MS, so random kids cannot turn into a flood of fetches, and
 * every fetch is bounded in time and size: what the issuer's URL sends is
 * untrusted input like any request (OWASP API10).
 */
import { createPublicKey } from 'node:crypto'
import { algorithmOf } from './key-material.js'

const FETCH_TIMEOUT_MS = 5000
const REFETCH_INTERVAL_MS = 10_000
const MAX_KEYS = 100
/** A JWKS of MAX_KEYS large RSA keys is well under this; a response past it is not read into memory whole. */
const MAX_JWKS_BYTES = 1024 * 1024
/** Even known keys are refetched this often, so a key the issuer withdrew stops verifying. */
const MAX_AGE_MS = 10 * 60_000

export interface JwksKeys {
  /**
   * The PEM of the key with this kid, or undefined when the issuer does not
   * publish one. Throws when the JWKS had to be fetched and could not be, unless
   * the key is already known: an issuer that is down for a while does not stop
   * the keys it published from verifying.
   */
  keyFor (kid: string | undefined, alg: string): Promise<string | undefined>
}

interface Jwk { kid?: string, alg?: string, use?: string, kty?: string }

export function jwksKeys (url: string, { refetchIntervalMs = REFETCH_INTERVAL_MS, maxAgeMs = MAX_AGE_MS } = {}): JwksKeys {
  let keys = new Map<string, { pem: string, alg: string | undefined }>()
  let fetchedAt = 0
  let inflight: Promise<void> | undefined

  async function refresh (): Promise<void> {
    fetchedAt = Date.now()
    const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' })
    if (!response.ok) throw new Error(`JWKS ${url} answered ${response.status}`)
    const listed = (await jsonWithin(response, MAX_JWKS_BYTES, url) as { keys?: unknown } | null)?.keys
    if (!Array.isArray(listed)) throw new Error(`JWKS ${url} is not a JSON Web Key Set: it has no "keys" array`)
    const next = new Map<string, { pem: string, alg: string | undefined }>()
    for (const jwk of listed.slice(0, MAX_KEYS) as unknown[]) {
      if (typeof jwk !== 'object' || jwk === null) continue
      const { use, kid, alg } = jwk as Jwk
      if (use !== undefined && use !== 'sig') continue
      try {
        const key = createPublicKey({ key: jwk as Record<string, unknown> & { kty: string }, format: 'jwk' })
        next.set(kid ?? '', { pem: key.export({ type: 'spki', format: 'pem' }).toString(), alg: alg ?? algorithmOf(key) })
      } catch {
        // a key this runtime cannot read is skipped, not fatal
      }
    }
    keys = next
  }

  return {
    async keyFor (kid, alg) {
      const cached = keys.get(kid ?? '')
      const age = Date.now() - fetchedAt
      if ((cached === undefined && age >= refetchIntervalMs) || age >= maxAgeMs) {
        inflight ??= refresh().finally(() => { inflight = undefined })
        try {
          await inflight
        } catch (error) {
          if (cached === undefined) throw error
        }
      }
      const key = keys.get(kid ?? '')
      return key !== undefined && key.alg === alg ? key.pem : undefined
    }
  }
}

/** The response's JSON, read only while it stays within `limit` bytes. */
async function jsonWithin (response: Response, limit: number, url: string): Promise<unknown> {
  const tooLarge = (): Error => new Error(`JWKS ${url} is larger than ${limit} bytes`)
  if (Number(response.headers.get('content-length') ?? 0) > limit) {
    await response.body?.cancel()
    throw tooLarge()
  }
  const chunks: Uint8Array[] = []
  let size = 0
  // Leaving the loop early cancels the stream: the rest is never downloaded.
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge()
    chunks.push(chunk)
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown
}
