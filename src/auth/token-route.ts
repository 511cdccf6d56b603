/**
 * POST /v1/auth/token: OAuth 2.0 client credentials (RFC 6749 §4.4). The
 * client authenticates with HTTP Basic; the body (form or JSON) asks for
 * `grant_type=client_credentials` and optionally a `scope`, which is cut down
 * to the client's. Errors follow §5.2, as problem details with `error`.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { annotate, OAuthInvalidClient, OAuthInvalidRequest, OAuthInvalidScope, OAuthUnsupportedGrant, rateLimited } from '../errors.js'
import type { tokenEndpointLimit } from '../plugins/rate-limit.js'
import { rateLimitSetting, refusedWaitExample } from '../resources/header-examples.js'
import type { ProblemDoc } from '../resources/problem-examples.js'
import { ifMatchWithoutRepresentation, noRepresentationToMatch } from '../http/conditional.js'
import { linkBase } from '../http/instance.js'
import { jsonResponse, NO_REPRESENTATION_CONDITIONS, noRepresentationProblem, problemResponses } from '../resources/responses.js'
import { DECOY_SECRET_HASH, parseScopes, verifyClientSecret } from './secrets.js'
import { clientSubject } from './subjects.js'

const FORM = 'application/x-www-form-urlencoded'

export const TokenRequest = Type.Object({
  grant_type: Type.Literal('client_credentials'),
  scope: Type.Optional(Type.String({ description: 'Space-separated scopes; cut down to the client\'s. Default: all of them.' }))
}, { $id: 'TokenRequest', additionalProperties: true, examples: [{ grant_type: 'client_credentials', scope: 'projects:read' }] })

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires.' }),
  scope: Type.String({ description: 'The scopes granted, space-separated.' })
}, {
  $id: 'TokenResponse',
  additionalProperties: false,
  examples: [{ access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjbGllbnQ6cnN5Y19jQjBnUkdjWkVhbmRvQUZJIiwic2NvcGUiOiJwcm9qZWN0czpyZWFkIiwiZXhwIjoxNzk1NTExMjIxLCJpYXQiOjE3OTU1MDc2MjF9.MbPGM5n0smIEKqm7XiQFH-jvqYsa8rVJFejIA9il4Vo', token_type: 'Bearer', expires_in: 3600, scope: 'projects:read' }]
})

/** The challenge of a 401 at the token endpoint: authenticate the client with its id and secret. */
export const CLIENT_CHALLENGE = 'Basic realm="token"'

function oauthError (Kind: typeof OAuthInvalidRequest, error: string, description: string): Error {
  const headers: Record<string, string> = Kind === OAuthInvalidClient ? { 'www-authenticate': CLIENT_CHALLENGE } : {}
  return annotate(new Kind(description), { members: { error }, headers: { ...headers, pragma: 'no-cache' } })
}

const unknownClient = (): Error => oauthError(OAuthInvalidClient, 'invalid_client', 'the client is unknown, revoked, or the secret is wrong')
const onlyClientCredentials = (): Error => oauthError(OAuthUnsupportedGrant, 'unsupported_grant_type', 'only grant_type=client_credentials is supported')

const TOKEN_REFUSED: ProblemDoc = { status: 400, error: onlyClientCredentials(), description: 'The request is invalid; `error` is `invalid_request`, `unsupported_grant_type` or `invalid_scope` (RFC 6749 §5.2).' }
const NOT_ISSUED = 'no token was issued'
const TOKEN_PRECONDITION = noRepresentationProblem('/v1/auth/token', NOT_ISSUED)
const CLIENT_UNAUTHENTICATED: ProblemDoc = { status: 401, error: unknownClient(), description: 'Client authentication failed (`error`: `invalid_client`): no Basic credentials, or an unknown or revoked client, or a wrong secret.' }

/** `Authorization: Basic base64(client_id:client_secret)`, each part form-encoded (RFC 6749 §2.3.1). */
function basicCredentials (request: FastifyRequest): { clientId: string, secret: string } {
  const match = /^Basic +([A-Za-z0-9+/=]+)$/i.exec(request.headers.authorization?.trim() ?? '')
  const decoded = match === null ? '' : Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0) throw oauthError(OAuthInvalidClient, 'invalid_client', 'authenticate the client with HTTP Basic: client_id:client_secret')
  try {
    return { clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')) }
  } catch {
    throw oauthError(OAuthInvalidClient, 'invalid_client', 'the client credentials are not properly encoded')
  }
}

/** The endpoint's 429, shown under its own limit, not the service's. */
function refusedHere (limit: TokenRouteOptions['rateLimit']): ProblemDoc {
  const setting = rateLimitSetting(limit)!
  return { status: 429, error: rateLimited(setting.max, setting.windowSeconds, refusedWaitExample(setting)) }
}

export interface TokenRouteOptions {
  readonly ttlSeconds: number
  /** The endpoint's own, stricter rate limit. */
  readonly rateLimit: ReturnType<typeof tokenEndpointLimit>
}

export async function tokenRoute (app: FastifyInstance, { ttlSeconds, rateLimit }: TokenRouteOptions): Promise<void> {
  // Forms are accepted here only: the token endpoint is the one place OAuth clients send them.
  app.addContentTypeParser(FORM, { parseAs: 'string' }, function parseForm (_request, body, done) {
    const form: Record<string, string> = {}
    for (const [key, value] of new URLSearchParams(body as string)) {
      if (key in form) {
        done(oauthError(OAuthInvalidRequest, 'invalid_request', `the parameter ${key} is repeated`), undefined)
        return
      }
      form[key] = value
    }
    done(null, form)
  })

  app.post('/token', {
    config: { auth: 'client', accepts: [FORM, 'application/json'], rateLimit },
    attachValidation: true,
    schema: {
      tags: ['auth'],
      operationId: 'createToken',
      summary: 'Exchange client credentials for an access token',
      description: 'RFC 6749 §4.4. Authenticate with HTTP Basic (client_id:client_secret). Errors carry the OAuth `error` code.',
      security: [{ clientBasic: [] }],
      headers: NO_REPRESENTATION_CONDITIONS,
      body: { content: { [FORM]: { schema: Type.Ref('TokenRequest') }, 'application/json': { schema: Type.Ref('TokenRequest') } } },
      response: {
        200: jsonResponse('An access token.', Type.Ref('TokenResponse')),
        ...problemResponses([TOKEN_REFUSED, CLIENT_UNAUTHENTICATED, TOKEN_PRECONDITION, 413, 415, refusedHere(rateLimit)])
      }
    }
  }, async function issueToken (request, reply) {
    const { clientId, secret } = basicCredentials(request)
    const client = await app.store.credentials.findClient(clientId)
    // The slow hash runs for unknown clients too, so timing does not reveal which ids exist.
    const verified = await verifyClientSecret(secret, client?.secretHash ?? DECOY_SECRET_HASH)
    if (client === undefined || client.revokedAt !== undefined || !verified) {
      throw unknownClient()
    }
    const body = (request.body ?? {}) as { grant_type?: unknown, scope?: unknown }
    if (body.grant_type === undefined) throw oauthError(OAuthInvalidRequest, 'invalid_request', 'grant_type is required')
    if (body.grant_type !== 'client_credentials') throw onlyClientCredentials()
    if (request.validationError !== undefined || (body.scope !== undefined && typeof body.scope !== 'string')) {
      throw oauthError(OAuthInvalidRequest, 'invalid_request', 'scope must be a space-separated string')
    }
    const requested = typeof body.scope === 'string' ? parseScopes(body.scope) : []
    const granted = requested.length === 0 ? [...client.scopes] : requested.filter(scope => client.scopes.includes(scope))
    if (granted.length === 0) throw oauthError(OAuthInvalidScope, 'invalid_scope', `none of the requested scopes is granted to this client; it may have: ${client.scopes.join(' ')}`)
    // Evaluated last, as RFC 9110 §13.2.1 asks: an answer that would not be a 2xx without it stands.
    if (ifMatchWithoutRepresentation(request.headers)) throw noRepresentationToMatch(linkBase(request.url), NOT_ISSUED)
    const scope = granted.join(' ')
    const token = app.signServiceToken({ sub: clientSubject(client.clientId), scope }, ttlSeconds)
    return await reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      .send({ access_token: token, token_type: 'Bearer', expires_in: ttlSeconds, scope })
  })
}

export const tokenSchemas = [TokenRequest, TokenResponse]
