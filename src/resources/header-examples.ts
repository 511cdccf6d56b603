/**
 * Example values of the documented response headers, made by the code that
 * sends them, as problem-examples.ts makes the problem bodies: what a reader
 * of the document sees is what the service answers. They tell of the answers
 * the body examples show: record 1, not changed since it was created; the
 * second page of a list of 95; a credential at the default limit of 100
 * requests a minute that has just made its first, or (on a 429) its last.
 */
import { Settings } from '../config.js'
import { parseDuration } from '../duration.js'
import { annotationOf, storeUnavailable } from '../errors.js'
import { bodyTag, formatEntityTag, httpDate, pageTag, recordTag } from '../http/conditional.js'
import { policyField, remainingField } from '../http/rate-limit-fields.js'
import { pageLinks } from './links.js'
import { DEFAULT_LIMIT } from './query-schema.js'

/**
 * The id of the record every example is about: the body a GET shows, the
 * path a 404 names, the parent a related list is under. One id, so that an
 * operation's examples tell of one request; 1, so that Try it out in /docs
 * finds the first record a reader creates.
 */
export const EXAMPLE_ID = 1
/** When the example records were created, and last changed. */
export const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z'
/** The request the examples answer: its X-Request-Id, and the `requestId` of the problem examples. */
export const EXAMPLE_REQUEST_ID = '8d0f1b1e-54a3-4c8b-9a3e-2f0b7c6d5e41'
/** How many items the example list holds; its example page is the second. */
export const EXAMPLE_TOTAL = 95
const EXAMPLE_PAGE = 2

/** A record's strong ETag, for a resource whose representation digest is `epoch`: record 1, as created. */
export const recordTagExample = (epoch: string): string => formatEntityTag(recordTag(epoch, EXAMPLE_ID, 1))
export const LAST_MODIFIED_EXAMPLE = httpDate(EXAMPLE_TIME)

/** The page links of the list at `path`, asked for as `?page=2`. */
export const pageLinksExample = (path: string): string => pageLinks(path, `page=${EXAMPLE_PAGE}`, EXAMPLE_PAGE, DEFAULT_LIMIT, EXAMPLE_TOTAL)
/** A list page's weak ETag, for a page whose body is `body`. */
export const pageTagExample = (body: unknown): string => formatEntityTag(pageTag(bodyTag(JSON.stringify(body)).opaque, String(EXAMPLE_TOTAL)))
/** A weak ETag of a body digest alone, as an admin list has (its body and headers: `body`). */
export const bodyTagExample = (body: unknown): string => formatEntityTag(bodyTag(JSON.stringify(body)))

/** A route's rate limit: `max` requests in `windowSeconds`. */
export interface RateLimitSetting { readonly max: number, readonly windowSeconds: number }
/** RATE_LIMIT_MAX and RATE_LIMIT_WINDOW at their defaults. */
export const DEFAULT_RATE_LIMIT: RateLimitSetting = {
  max: Settings.properties.RATE_LIMIT_MAX.default as number,
  windowSeconds: parseDuration(Settings.properties.RATE_LIMIT_WINDOW.default as string)!
}
/** Where the example 429 stands in its window: the problem example says to retry after 42 s. */
export const RETRY_AFTER_EXAMPLE = 42

export interface RateLimitExample { readonly limit: number, readonly remaining: number, readonly reset: number, readonly policy: string, readonly fields: string }

/** A route's own limit as @fastify/rate-limit takes it (`timeWindow` in ms), when it is plain numbers. */
export function rateLimitSetting (options: { readonly max?: unknown, readonly timeWindow?: unknown }): RateLimitSetting | undefined {
  const { max, timeWindow } = options
  return typeof max === 'number' && typeof timeWindow === 'number' ? { max, windowSeconds: timeWindow / 1000 } : undefined
}

/** How long the example 429 under `setting` waits: 42 s, unless its window is shorter. */
export const refusedWaitExample = ({ windowSeconds }: RateLimitSetting): number => Math.min(RETRY_AFTER_EXAMPLE, windowSeconds)

/** The rate-limit headers under `setting`, on the answer to a credential's first request, or (`refused`) on a 429. */
export function rateLimitExample (setting: RateLimitSetting, refused: boolean): RateLimitExample {
  const { max, windowSeconds } = setting
  const remaining = refused ? 0 : max - 1
  const reset = refused ? refusedWaitExample(setting) : windowSeconds
  return { limit: max, remaining, reset, policy: policyField(max, windowSeconds), fields: remainingField(remaining, reset) }
}

/** The value of `name` among the headers the service answers `error` with. */
export function headerOfError (error: unknown, name: string): string {
  const value = annotationOf(error).headers?.[name]
  if (value === undefined) throw new Error(`the error answers without ${name}`)
  return String(value)
}

/** Retry-After of a 503, as the database's absence answers it (the 503 problem example). */
export const UNAVAILABLE_RETRY_AFTER_EXAMPLE = Number(headerOfError(storeUnavailable('the database is unavailable'), 'retry-after'))
