/**
 * Rate limiting on every /v1 route through @fastify/rate-limit: counted per
 * credential once authenticated, per client IP otherwise (so guessing
 * credentials is limited too), with per-scope limits, a stricter limit on
 * the token endpoint, and counters in Redis when REDIS_URL is set. A Redis
 * outage fails open (requests are served, the outage logged) and the limit
 * recovers when Redis returns. Every answer carries X-RateLimit-* and the
 * IETF draft RateLimit-Policy / RateLimit fields.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { annotate, rateLimited } from '../errors.js'
import { sendAtTurnEnd } from '../turn-end-sends.js'
import { policyField, remainingField } from '../http/rate-limit-fields.js'

export interface RateLimitOptions {
  readonly max: number
  readonly windowSeconds: number
  /** scope → limit; a credential gets the highest among its scopes. */
  readonly scopeLimits: ReadonlyMap<string, number>
  readonly tokenMax: number
  readonly redisUrl: string
}

const VERSIONED = /^\/v[^/]+(\/|$)/

/** The counter's fields (@fastify/rate-limit's names), on every limited answer; rateLimitFields derives the IETF draft's from them. */
const COUNTER_HEADERS = { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true } as const

function keyOf (request: FastifyRequest): string {
  return request.principal === null ? `ip:${request.ip}` : `sub:${request.principal.credential}`
}

async function limits (app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  // ioredis is loaded only when counters are shared: a single process does not carry it in memory.
  const redis: Redis | undefined = options.redisUrl === ''
    ? undefined
    : new (await import('ioredis')).Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 1000, commandTimeout: 500 })
  if (redis !== undefined) {
    let down = false
    let closing = false
    const lost = (error?: Error): void => {
      if (!down && !closing) app.log.error({ err: error }, 'Redis is unreachable: rate limits are not enforced until it returns')
      down = true
    }
    // Each (re)connection's stream: the turn's counting commands go to Redis in one write (turn-end-sends.ts).
    redis.on('connect', () => { sendAtTurnEnd(redis.stream) })
    redis.on('error', lost)
    redis.on('close', () => { lost() })
    redis.on('ready', () => {
      if (down) app.log.info('Redis is back: rate limits are enforced again')
      down = false
    })
    app.addHook('onClose', async function closeRedis () {
      closing = true
      redis.disconnect()
    })
    // Start counting from the first request when Redis is there; start anyway (failing open) when it is not.
    await new Promise<void>(resolve => {
      const timer = setTimeout(resolve, 2000)
      redis.once('ready', () => { clearTimeout(timer); resolve() })
    })
  }

  // Versioned routes share one budget per key (a route with its own settings, such as the
  // token endpoint, counts apart); operations and documentation are not limited.
  app.addHook('onRoute', function limitVersionedRoutes (route) {
    if (!VERSIONED.test(route.url) && route.config?.rateLimit === undefined) route.config = { ...route.config, rateLimit: false }
  })

  const timeWindow = options.windowSeconds * 1000
  await app.register(rateLimit, {
    global: true,
    timeWindow,
    // A plain number unless scopes have their own limits: a function costs an await per request.
    max: options.scopeLimits.size === 0
      ? options.max
      : async (request: FastifyRequest) => {
        const scopes = request.principal?.scopes ?? new Set<string>()
        return Math.max(options.max, ...[...scopes].map(scope => options.scopeLimits.get(scope) ?? 0))
      },
    keyGenerator: keyOf,
    skipOnError: true,
    ...(redis === undefined ? {} : { redis, nameSpace: 'resourcery-rl:' }),
    addHeadersOnExceeding: COUNTER_HEADERS,
    // A refused request also says when to come back.
    addHeaders: { ...COUNTER_HEADERS, 'retry-after': true },
    errorResponseBuilder: (_request, context) => annotate(
      rateLimited(context.max, options.windowSeconds, Math.ceil(context.ttl / 1000)),
      {}
    )
  })

  // The IETF draft's structured fields (draft-ietf-httpapi-ratelimit-headers), from the same counters.
  app.addHook('onSend', function rateLimitFields (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
    const limit = reply.getHeader('x-ratelimit-limit')
    if (limit !== undefined) {
      reply.header('ratelimit-policy', policyField(limit, options.windowSeconds))
      reply.header('ratelimit', remainingField(reply.getHeader('x-ratelimit-remaining'), reply.getHeader('x-ratelimit-reset')))
    }
    done(null, payload)
  })
}

/** Per-route settings for the token endpoint: few attempts per client IP. */
export function tokenEndpointLimit (max: number, windowSeconds: number) {
  return { max, timeWindow: windowSeconds * 1000, keyGenerator: (request: FastifyRequest) => `token:${request.ip}` }
}

export default fp(limits, { name: 'resourcery-rate-limit', dependencies: ['resourcery-auth'] })
