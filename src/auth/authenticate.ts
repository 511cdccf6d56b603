/**
 * Authorization header → Principal (who is calling, with which scopes), and
 * the scope check. A bearer credential is an API key when it has the `rsy_`
 * prefix and a JWT otherwise; nothing else is accepted on resource routes.
 */
import { hash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { annotate, ScopeForbidden, ScopeMissing, Unauthenticated } from '../errors.js'
import type { ApiKeyRecord, CredentialStore } from '../store/credentials.js'
import { invalidToken, type JwtVerifier, type TokenClaims } from './jwt.js'
import { hashApiKey, looksLikeApiKey, parseScopes } from './secrets.js'
import { apiKeySubject } from './subjects.js'

export const ADMIN_SCOPE = 'admin'

export interface Principal {
  /**
   * Who the caller is, whose records it owns: JWT `sub`, `api-key:{id}` for an
   * API key, `client:{clientId}` for a client's token. A JWT may have no `sub`.
   */
  readonly subject?: string
  /** What rate limits and idempotency keys are kept per: the subject, or for a token without one the token itself. */
  readonly credential: string
  readonly scopes: ReadonlySet<string>
  readonly via: 'jwt' | 'api-key'
}

/** lastUsedAt is written at most this often per key: a write per request would cost an fsync each. */
const TOUCH_INTERVAL_MS = 60_000

export interface Authenticator {
  authenticate (request: FastifyRequest): Promise<Principal>
}

/**
 * A principal made once per source and reused while the source is: a verified
 * token's claims and a looked-up key's record stay the same objects while they
 * are cached (jwt.ts, api-key-cache.ts), so a hot credential costs no scope
 * parsing or Set per request.
 */
function remembered<Source extends object, Extra extends unknown[]> (make: (source: Source, ...extra: Extra) => Principal): (source: Source, ...extra: Extra) => Principal {
  const made = new WeakMap<Source, Principal>()
  return (source, ...extra) => {
    let principal = made.get(source)
    if (principal === undefined) {
      principal = make(source, ...extra)
      made.set(source, principal)
    }
    return principal
  }
}

/** A token without `sub` is its own credential, named by a digest so that the token itself is not kept as a key. */
const tokenCredential = (token: string): string => `token:${hash('sha256', token, 'base64url')}`

const ofClaims = remembered((claims: TokenClaims, token: string): Principal => ({
  ...(claims.sub === undefined ? { credential: tokenCredential(token) } : { subject: claims.sub, credential: claims.sub }),
  scopes: new Set(parseScopes(claims.scope ?? '')),
  via: 'jwt'
}))
const ofApiKey = remembered((record: ApiKeyRecord): Principal => {
  const subject = apiKeySubject(record.id)
  return { subject, credential: subject, scopes: new Set(record.scopes), via: 'api-key' }
})

export function createAuthenticator (credentials: CredentialStore, verifyJwt: JwtVerifier): Authenticator {
  const touched = new Map<number, number>()

  async function apiKeyPrincipal (request: FastifyRequest, key: string): Promise<Principal> {
    const record = await credentials.findApiKey(hashApiKey(key))
    if (record === undefined) throw invalidToken('the API key is not known')
    if (record.revokedAt !== undefined) throw invalidToken('the API key has been revoked')
    const now = Date.now()
    if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now) throw invalidToken('the API key has expired')
    if (now - (touched.get(record.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      touched.set(record.id, now)
      credentials.touchApiKey(record.id, new Date(now).toISOString()).catch((error: unknown) => {
        request.log.warn({ err: error }, 'could not record the API key\'s last use')
      })
    }
    return ofApiKey(record)
  }

  return {
    async authenticate (request) {
      const header = request.headers.authorization
      if (header === undefined || header.trim() === '') {
        throw noCredential()
      }
      const match = /^(\S+) +(\S+)$/.exec(header.trim())
      if (match === null || match[1]!.toLowerCase() !== 'bearer') {
        throw invalidToken(/^bearer\b/i.test(header.trim())
          ? 'a Bearer credential is one token or API key after "Bearer ", with no spaces in it'
          : 'only Bearer credentials are accepted here (Basic only at /v1/auth/token)')
      }
      const token = match[2]!
      if (looksLikeApiKey(token)) return await apiKeyPrincipal(request, token)
      return ofClaims(await verifyJwt(token), token)
    }
  }
}

export function hasScope (principal: Principal, scope: string): boolean {
  return principal.scopes.has(scope) || principal.scopes.has(ADMIN_SCOPE)
}

/** The 401 of a request with no credential, whose challenge says what to send (RFC 6750 §3). */
export const noCredential = (): Error => annotate(new Unauthenticated('send a credential: Authorization: Bearer <token or API key>'), {
  headers: { 'www-authenticate': 'Bearer realm="api"' }
})

export function insufficientScope (scope: string, status: 401 | 403): Error {
  const Kind = status === 403 ? ScopeForbidden : ScopeMissing
  return annotate(new Kind(`this needs the scope ${scope}`), {
    headers: { 'www-authenticate': `Bearer realm="api", error="insufficient_scope", scope="${scope}"` }
  })
}
