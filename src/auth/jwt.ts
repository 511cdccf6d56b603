/**
 * Bearer JWTs through @fastify/jwt. The key is chosen by the token's `alg`:
 * HS256 is only ever verified with the service's own secret, and the
 * asymmetric algorithms of the allow-list only with the external issuer's
 * public key or JWKS, so a token signed with the public key as an HMAC secret
 * (algorithm confusion) never verifies. `none` is never accepted.
 */
import fastifyJwt, { type TokenOrHeader } from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { annotate, InvalidCredential } from '../errors.js'
import type { JwksKeys } from './jwks.js'
import type { ExternalKey } from './key-material.js'

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
  readonly sub: string
  readonly scope?: string
  readonly exp: number
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: { sub: string, scope?: string }
    user: TokenClaims
  }
}

export function invalidToken (reason: string): Error {
  return annotate(new InvalidCredential(reason), {
    headers: { 'www-authenticate': `Bearer realm="api", error="invalid_token", error_description="${reason.replace(/"/g, "'")}"` }
  })
}

const REASONS: Record<string, string> = {
  FST_JWT_AUTHORIZATION_TOKEN_EXPIRED: 'the token has expired',
  FAST_JWT_INACTIVE: 'the token is not valid yet (nbf)',
  FAST_JWT_MISSING_REQUIRED_CLAIM: 'the token lacks a required claim (exp and sub are required)',
  FAST_JWT_INVALID_CLAIM_VALUE: 'the token\'s iss or aud is not accepted',
  FAST_JWT_INVALID_CLAIM_TYPE: 'a claim of the token has the wrong type',
  FAST_JWT_INVALID_ALGORITHM: 'the token\'s algorithm is not accepted',
  FST_JWT_AUTHORIZATION_TOKEN_INVALID: 'the token is malformed or its signature does not verify'
}

export async function registerJwt (app: FastifyInstance, settings: JwtSettings): Promise<void> {
  const { secret, external, jwks, externalAlgorithms } = settings
  const asymmetric = external !== undefined
    ? externalAlgorithms.filter(algorithm => algorithm === external.algorithm)
    : jwks !== undefined ? [...externalAlgorithms] : []

  async function keyFor (_request: FastifyRequest, token: TokenOrHeader): Promise<string> {
    const { alg, kid } = ('header' in token ? token.header : token) as { alg?: string, kid?: string }
    if (alg === 'HS256') return secret
    if (alg === undefined || !asymmetric.includes(alg)) throw invalidToken(`the token's algorithm ${String(alg)} is not accepted`)
    if (external !== undefined) return external.pem
    const pem = await jwks!.keyFor(kid, alg).catch((error: unknown) => {
      app.log.warn({ err: error }, 'could not fetch the JWKS of the token issuer')
      return undefined
    })
    if (pem === undefined) throw invalidToken('the token\'s key is not published by the issuer')
    return pem
  }

  await app.register(fastifyJwt, {
    secret: { private: secret, public: keyFor },
    decode: { complete: true },
    verify: {
      algorithms: ['HS256', ...asymmetric] as Array<'HS256'>,
      // fast-jwt checks iss / aud only when present, so configured ones are also required.
      requiredClaims: ['exp', 'sub', ...(settings.issuer === '' ? [] : ['iss']), ...(settings.audience === '' ? [] : ['aud'])],
      ...(settings.issuer === '' ? {} : { allowedIss: settings.issuer }),
      ...(settings.audience === '' ? {} : { allowedAud: settings.audience }),
      // Verified tokens are cached (until they expire), so a hot token costs no signature check.
      cache: 1000
    }
  })
}

/** Verifies the request's bearer JWT; any failure is a 401 invalid_token that says why. */
export async function verifyJwt (request: FastifyRequest): Promise<TokenClaims> {
  try {
    const claims = await request.jwtVerify<TokenClaims>()
    if (typeof claims.sub !== 'string' || claims.sub === '' || (claims.scope !== undefined && typeof claims.scope !== 'string')) {
      throw invalidToken('the token\'s sub must be a non-empty string and scope a string')
    }
    return claims
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'RSY_ERR_AUTH_INVALID') throw error
    throw invalidToken(REASONS[code ?? ''] ?? 'the token could not be verified')
  }
}
