/**
 * The headers every answer carries, added to each route's documented
 * responses where the route did not describe them itself: X-Request-Id;
 * Cache-Control, with the value caching.ts sends for that status and method;
 * the rate-limit headers on limited routes, refusals included;
 * WWW-Authenticate with 401 and 403; Accept-Post / Accept-Patch and Accept-Encoding with 415;
 * Idempotent-Replayed on routes that honour Idempotency-Key.
 * Registered after the rate limiter's onRoute hook, which marks the routes it
 * does not limit, and before @fastify/swagger reads the routes.
 */
import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { insufficientScope, noCredential } from '../auth/authenticate.js'
import { CLIENT_CHALLENGE } from '../auth/token-route.js'
import { ACCEPTED_CODINGS } from '../http/request-coding.js'
import { DEFAULT_RATE_LIMIT, EXAMPLE_REQUEST_ID, headerOfError, rateLimitSetting, type RateLimitSetting } from '../resources/header-examples.js'
import { header, optionalHeader, rateLimitHeaders, sharedHeader, withHeaders, type HeaderDoc } from '../resources/responses.js'
import { cacheControlOf } from './caching.js'

const X_REQUEST_ID = sharedHeader('string', 'The request\'s id: the client\'s own X-Request-Id when it sent a short plain one, else a new UUID; also `requestId` in problems and in the log.', EXAMPLE_REQUEST_ID)

const ACCEPT_ENCODING = optionalHeader('string', `When the body's Content-Encoding was refused: the codings a body here may come in (\`${ACCEPTED_CODINGS}\`), besides none.`, ACCEPTED_CODINGS)

const IDEMPOTENT_REPLAYED = optionalHeader('string', '`true` when this is the stored first answer to a request with the same Idempotency-Key: nothing was done this time.', 'true')

// Shown as the 401's problem example answers: no credential was sent.
const WWW_AUTHENTICATE_BEARER = sharedHeader('string', '`Bearer realm="api"`, with `error="invalid_token"` when a credential was sent, or `error="insufficient_scope", scope="…"` naming the scope needed (RFC 6750 §3).', headerOfError(noCredential(), 'www-authenticate'))
const WWW_AUTHENTICATE_BASIC = header('string', `\`${CLIENT_CHALLENGE}\`: authenticate the client with its id and secret (RFC 6749 §2.3.1).`, CLIENT_CHALLENGE)

/** A 403's challenge (AUTHZ_DENIED_STATUS=403), naming the scope `route` needs. */
function scopeChallenge (route: RouteOptions): HeaderDoc {
  const scope = route.config?.scope
  if (scope === undefined) throw new Error(`${route.url} documents a 403 but needs no scope`)
  return header('string', '`Bearer realm="api", error="insufficient_scope", scope="…"`, naming the scope needed (RFC 6750 §3).', headerOfError(insufficientScope(scope, 403), 'www-authenticate'))
}

function cacheControl (route: RouteOptions, status: number): HeaderDoc {
  const value = cacheControlOf([route.method].flat().includes('GET'), status, route.config?.cacheControl)
  return header('string', `\`${value}\``, value)
}

/**
 * The limit `route` is shown under: its own (the token endpoint's), or the
 * service's at its defaults. Undefined where nothing is limited.
 */
function rateLimitOf (route: RouteOptions): RateLimitSetting | undefined {
  const own = route.config?.rateLimit
  if (own === false) return undefined
  return (own === undefined ? undefined : rateLimitSetting(own)) ?? DEFAULT_RATE_LIMIT
}

/** The media types a body here may be in, as Accept-Post and Accept-Patch name them. */
const acceptedTypes = (route: RouteOptions): string => (route.config?.accepts ?? []).join(', ')

/** The headers an answer of each status on `route` carries, besides its own: what is the same for every status is made once. */
function answerHeaders (route: RouteOptions): (status: number) => Record<string, HeaderDoc> {
  const methods = [route.method].flat()
  const limit = rateLimitOf(route)
  const counted = limit === undefined ? {} : rateLimitHeaders(limit, false)
  const refused = limit === undefined ? {} : rateLimitHeaders(limit, true)
  const basic = (route.schema?.security as Array<Record<string, unknown>> | undefined)?.some(requirement => 'clientBasic' in requirement) === true
  return status => ({
    'X-Request-Id': X_REQUEST_ID,
    'Cache-Control': cacheControl(route, status),
    ...(status === 429 ? refused : counted),
    ...(route.config?.idempotent === true ? { 'Idempotent-Replayed': IDEMPOTENT_REPLAYED } : {}),
    ...(status === 401 ? { 'WWW-Authenticate': basic ? WWW_AUTHENTICATE_BASIC : WWW_AUTHENTICATE_BEARER } : {}),
    ...(status === 403 ? { 'WWW-Authenticate': scopeChallenge(route) } : {}),
    ...(status === 415 && methods.includes('POST') ? { 'Accept-Post': header('string', 'The media types a POST here accepts.', acceptedTypes(route)) } : {}),
    ...(status === 415 && methods.includes('PATCH') ? { 'Accept-Patch': header('string', 'The media types a PATCH here accepts.', acceptedTypes(route)) } : {}),
    ...(status === 415 ? { 'Accept-Encoding': ACCEPT_ENCODING } : {})
  })
}

async function documentedHeaders (app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', function documentAnswerHeaders (route) {
    const responses = route.schema?.response as Record<string, unknown> | undefined
    if (responses === undefined || route.schema?.hide === true) return
    route.schema = { ...route.schema, response: withHeaders(responses, answerHeaders(route)) }
  })
}

export default fp(documentedHeaders, { name: 'resourcery-documented-headers' })
