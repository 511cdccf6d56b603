/**
 * Tokens the service signs itself (client credentials, `resourcery token`):
 * HS256 with the service secret, `iss` / `aud` as configured, so the verifier
 * accepts them by the same rules as any other token.
 */
import { createSigner } from 'fast-jwt'
import type { Config } from '../config.js'

export type ServiceTokenSigner = (claims: { sub: string, scope: string }, ttlSeconds: number) => string

export function serviceTokenSigner (secret: string, config: Pick<Config, 'jwtIssuer' | 'jwtAudience'>): ServiceTokenSigner {
  const sign = createSigner({
    key: secret,
    algorithm: 'HS256',
    ...(config.jwtIssuer === '' ? {} : { iss: config.jwtIssuer }),
    ...(config.jwtAudience === '' ? {} : { aud: config.jwtAudience })
  })
  return (claims, ttlSeconds) => sign({ ...claims, exp: Math.floor(Date.now() / 1000) + ttlSeconds })
}
