/**
 * Public keys of an external issuer from its JWKS URL: cached by `kid` for up to
 * MAX_AGE_MS, refetched when an unknown `kid` appears (key rotation) but at most once per
 * REFETCH_INTERVAL_MS, so random kids cannot turn into a flood of fetches, and
 * every fetch is bounded in time.
 */
import { createPublicKey } from 'node:crypto'
import { algorithmOf } from './key-material.js'

const FETCH_TIMEOUT_MS = 5000
const REFETCH_INTERVAL_MS = 10_000
const MAX_KEYS = 100
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
    const body = await response.json() as { keys?: Jwk[] }
    const next = new Map<string, { pem: string, alg: string | undefined }>()
    for (const jwk of (body.keys ?? []).slice(0, MAX_KEYS)) {
      if (jwk.use !== undefined && jwk.use !== 'sig') continue
      try {
        const key = createPublicKey({ key: jwk as Record<string, unknown> & { kty: string }, format: 'jwk' })
        next.set(jwk.kid ?? '', { pem: key.export({ type: 'spki', format: 'pem' }).toString(), alg: jwk.alg ?? algorithmOf(key) })
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
