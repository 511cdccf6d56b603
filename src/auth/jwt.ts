/**
 * Bearer JWTs, verified by fast-jwt. The key is chosen by the token's `alg`:
 * HS256 is only ever verified with the service's own secret, and the
 * asymmetric algorithms of the allow-list only with the external issuer's
 * public key or JWKS, so a token signed with the public key as an HMAC secret
 * (algorithm confusion) never verifies. `none` is never accepted.
 */
import type { FastifyBaseLogger } from 'fastify'
import { createVerifier, type Algorithm, type DecodedJwt } from 'fast-jwt'
import { BoundedMap } from '../bounded-map.js'
import { annotate, InvalidCredential, issuerUnreachable } from '../errors.js'
import type { JwksKeys } from './jwks.js'
import type { ExternalKey } from './key-material.js'
import { namesOwnCredential } from './subjects.js'

export interface JwtSettings {
  readonly secret: string
  readonly external?: ExternalKey
  readonly jwks?: JwksKeys
  /** Asymmetric algorithms accepted from the external issuer. */
  readonly externalAlgorithms: readonly string[]
  readonly issuer: string
  readonly audience: string
}

export interface TokenClaims {
  /** Optional, as the contract requires only `exp`; a token without it cannot own records (visibility.ts). */
  readonly sub?: string
  readonly scope?: string
  readonly exp: number
}

export function invalidToken (reason: string): Error {
  return annotate(new InvalidCredential(reason), {
    // RFC 6750 §3: error_description is printable ASCII without `"` or `\`; anything else would make Node refuse the header.
    headers: { 'www-authenticate': `Bearer realm="api", error="invalid_token", error_description="${reason.replace(/"/g, "'").replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?')}"` }
  })
}

const REASONS: Record<string, string> = {
  FAST_JWT_EXPIRED: 'the token has expired',
  FAST_JWT_INACTIVE: 'the token is not valid yet (nbf)',
  FAST_JWT_MISSING_REQUIRED_CLAIM: 'the token lacks a required claim (exp, and iss / aud where configured)',
  FAST_JWT_INVALID_CLAIM_VALUE: 'the token\'s iss or aud is not accepted',
  FAST_JWT_INVALID_CLAIM_TYPE: 'a claim of the token has the wrong type',
  FAST_JWT_INVALID_ALGORITHM: 'the token\'s algorithm is not accepted',
  FAST_JWT_MALFORMED: 'the token is malformed or its signature does not verify',
  FAST_JWT_INVALID_SIGNATURE: 'the token is malformed or its signature does not verify',
  FAST_JWT_MISSING_SIGNATURE: 'the token is not signed'
}

export type JwtVerifier = (token: string) => Promise<TokenClaims>

/** keyFor's own refusals, which fast-jwt hands back wrapped: a token refused (401), an issuer that could not be reached (503). */
const OWN_REFUSALS = new Set(['RSY_ERR_AUTH_INVALID', 'RSY_ERR_ISSUER_UNREACHABLE'])

/** Verified tokens remembered; the oldest is forgotten first. */
const VERIFIED_CACHE_SIZE = 1000
/** A verified token is trusted again without a check for at most this long (and never past its exp), as fast-jwt's own cache. */
const VERIFIED_CACHE_MS = 10 * 60_000

interface Verified { readonly claims: TokenClaims, readonly until: number }

/**
 * One fast-jwt verifier, built once, behind a cache of verified tokens keyed
 * by the token itself: a hot token costs one Map lookup. (fast-jwt's own
 * cache keys by a SHA-256 of the token, which costs about as much as the
 * HS256 check it saves; @fastify/jwt's request.jwtVerify merged option
 * objects and ran a callback waterfall on every request.)
 */
export function jwtVerifier (log: FastifyBaseLogger, settings: JwtSettings): JwtVerifier {
  const { secret, external, jwks, externalAlgorithms } = settings
  const asymmetric = external !== undefined
    ? externalAlgorithms.filter(algorithm => algorithm === external.algorithm)
    : jwks !== undefined ? [...externalAlgorithms] : []

  async function keyFor ({ header, payload }: DecodedJwt): Promise<string> {
    const { alg, kid } = header as { alg?: string, kid?: string }
    if (alg === 'HS256') return secret
    if (alg === undefined || !asymmetric.includes(alg)) throw invalidToken(`the token's algorithm ${String(alg)} is not accepted`)
    // Not echoed: the sub is the caller's text, and the reason goes into a header.
    const { sub } = payload as { sub?: unknown }
    if (typeof sub === 'string' && namesOwnCredential(sub)) throw invalidToken('the token\'s sub names one of this service\'s own credentials (it begins api-key: or client:), which only its own tokens may')
    if (external !== undefined) return external.pem
    const pem = await jwks!.keyFor(kid, alg).catch((error: unknown) => {
      log.warn({ err: error }, 'could not fetch the JWKS of the token issuer')
      throw issuerUnreachable('the token\'s issuer could not be reached for the key that verifies it; try again shortly')
    })
    if (pem === undefined) throw invalidToken('the token\'s key is not published by the issuer')
    return pem
  }

  const verify = createVerifier({
    key: keyFor,
    algorithms: ['HS256', ...asymmetric] as Algorithm[],
    // fast-jwt checks iss / aud only when present, so configured ones are also required.
    requiredClaims: ['exp', ...(settings.issuer === '' ? [] : ['iss']), ...(settings.audience === '' ? [] : ['aud'])],
    ...(settings.issuer === '' ? {} : { allowedIss: settings.issuer }),
    ...(settings.audience === '' ? {} : { allowedAud: settings.audience }),
    cache: false
  })
  const verified = new BoundedMap<string, Verified>(VERIFIED_CACHE_SIZE)

  return async token => {
    const known = verified.get(token)
    if (known !== undefined) {
      if (Date.now() < known.until) return known.claims
      // Expired (or trusted long enough): verified afresh, which also gives the right refusal.
      verified.delete(token)
    }
    // Not three dot-separated parts: refused here as fast-jwt would, without building its error (a stack trace, a tenth of a 401's CPU).
    const firstDot = token.indexOf('.')
    if (firstDot === -1 || firstDot === token.lastIndexOf('.')) throw invalidToken(REASONS.FAST_JWT_MALFORMED!)
    try {
      const claims = await verify(token) as TokenClaims
      if ((claims.sub !== undefined && (typeof claims.sub !== 'string' || claims.sub === '')) || (claims.scope !== undefined && typeof claims.scope !== 'string')) {
        throw invalidToken('the token\'s sub, when present, must be a non-empty string, and scope a string')
      }
      verified.set(token, { claims, until: Math.min(claims.exp * 1000, Date.now() + VERIFIED_CACHE_MS) })
      return claims
    } catch (error) {
      // A refusal of keyFor's own reaches here wrapped as a key-fetching error.
      const own = (error as { originalError?: unknown }).originalError
      if (own instanceof Error && OWN_REFUSALS.has(String((own as { code?: string }).code))) throw own
      const code = (error as { code?: string }).code
      if (code === 'RSY_ERR_AUTH_INVALID') throw error
      throw invalidToken(REASONS[code ?? ''] ?? 'the token could not be verified')
    }
  }
}
