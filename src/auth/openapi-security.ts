/**
 * How the OpenAPI document describes authentication: the security schemes,
 * and each operation's requirement with the scope it needs.
 */
import type { Resource } from '../resources/model.js'
import { ADMIN_SCOPE } from './authenticate.js'

export const TOKEN_PATH = '/v1/auth/token'

export function scopesOf (resources: readonly Resource[]): Record<string, string> {
  const scopes: Record<string, string> = {}
  for (const resource of resources) {
    scopes[`${resource.collection}:read`] = `Read ${resource.collection} (GET, HEAD).`
    scopes[`${resource.collection}:write`] = `Create, change and delete ${resource.collection}.`
  }
  scopes[ADMIN_SCOPE] = 'Everything, including API keys and clients, and every owner\'s records.'
  return scopes
}

export function securitySchemes (resources: readonly Resource[]): Record<string, unknown> {
  return {
    bearerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A JWT from /v1/auth/token, `resourcery token`, or the configured external issuer: `exp` required, scopes in its space-separated `scope` claim, and `sub` naming the caller (owned records need it).' },
    bearerApiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'rsy_…', description: 'An API key (`resourcery keys create`, or POST /v1/api-keys), sent as a bearer token.' },
    clientCredentials: {
      type: 'oauth2',
      description: 'OAuth 2.0 client credentials: exchange a client id and secret for a JWT.',
      flows: { clientCredentials: { tokenUrl: TOKEN_PATH, scopes: scopesOf(resources) } }
    },
    clientBasic: { type: 'http', scheme: 'basic', description: 'client_id:client_secret, only at the token endpoint.' }
  }
}

/**
 * An operation's requirement: any one bearer credential carrying the scope.
 * OpenAPI lists scopes only for OAuth schemes; the operation's description
 * states the scope for the bearer schemes (see scopeNote).
 */
export function securityFor (scope: string): Array<Record<string, string[]>> {
  return [{ bearerJwt: [] }, { bearerApiKey: [] }, { clientCredentials: [scope] }]
}

export function scopeNote (scope: string): string {
  return scope === ADMIN_SCOPE ? 'Needs the `admin` scope.' : `Needs the \`${scope}\` scope (or \`admin\`).`
}
