/**
 * Entity tags and conditional requests (RFC 9110 §8.8, §13). A stored
 * record's ETag is strong and derived from its id and version (so it changes
 * with every write and is the same for the same state), prefixed with a
 * digest of the resource's representation schema so a deploy that changes the
 * representation never revalidates an old copy.
 */
import { hash } from 'node:crypto'
import { BoundedMap } from '../bounded-map.js'
import { PreconditionFailed } from '../errors.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingHttpHeaders } from 'node:http'

export interface EntityTag {
  readonly weak: boolean
  readonly opaque: string
}

/** `"a", W/"b"` → tags; `*` → '*'; malformed members are ignored (they can match nothing). */
export function parseEntityTags (header: string | undefined): EntityTag[] | '*' | undefined {
  if (header === undefined) return undefined
  if (header.trim() === '*') return '*'
  const tags: EntityTag[] = []
  for (const match of header.matchAll(/(W\/)?"([^"]*)"/g)) tags.push({ weak: match[1] !== undefined, opaque: match[2]! })
  return tags
}

export const formatEntityTag = (tag: EntityTag): string => `${tag.weak ? 'W/' : ''}"${tag.opaque}"`

/** A short digest that changes whenever the given schema does. */
export function schemaEpoch (schema: unknown): string {
  return hash('sha256', JSON.stringify(schema), 'base64url').slice(0, 8)
}

export function recordTag (epoch: string, id: number, version: number): EntityTag {
  return { weak: false, opaque: `${epoch}.${id}.${version}` }
}

/**
 * If-Match (RFC 9110 §13.1.1): undefined without the header, else whether it
 * fails. The comparison is strong, so a weak tag matches nothing; `*` asks
 * only that the representation exist.
 */
function ifMatchFails (header: string | undefined, current: EntityTag): boolean | undefined {
  const tags = parseEntityTags(header)
  if (tags === undefined) return undefined
  return tags !== '*' && !tags.some(tag => !tag.weak && !current.weak && tag.opaque === current.opaque)
}

/**
 * RFC 9110 §13.2.2 steps 1 and 2, for any method: If-Match names no current
 * tag, or, without If-Match, the record changed after If-Unmodified-Since
 * (ignored where there is no modification time). Then the answer is 412 and
 * the method is not performed.
 */
export function preconditionFailed (headers: IncomingHttpHeaders, current: EntityTag, lastModified?: string): 'if-match' | 'if-unmodified-since' | undefined {
  const ifMatch = ifMatchFails(headers['if-match'], current)
  if (ifMatch !== undefined) return ifMatch ? 'if-match' : undefined
  return lastModified !== undefined && modifiedAfter(lastModified, headers['if-unmodified-since']) === true ? 'if-unmodified-since' : undefined
}

/** If-Match on a representation whose tag is weak (a list), known or not yet: it can hold only as `*`. */
export const failsOnWeakTag = (ifMatch: string | undefined): boolean => ifMatchFails(ifMatch, { weak: true, opaque: '' }) === true

/** Why an If-Match other than `*` failed on a representation whose tag is weak: `etag` names the tag, `where` (if anything) the request. */
const weakTagRefusal = (etag: string, where: string): string =>
  `${etag} is weak and If-Match compares ETags strongly, so ${where}only If-Match: * can hold (RFC 9110 §13.1.1)`

/** The 412 of a list's GET with an If-Match other than `*`, which its weak tag can never satisfy. */
export const listIfMatchFailed = (): Error => new PreconditionFailed(weakTagRefusal('a list\'s ETag', 'on a list '))

/** The 412 of a GET of a served document (the OpenAPI document, the docs UI's files) with an If-Match other than `*`: its tag is weak too. */
export const documentIfMatchFailed = (path: string): Error => new PreconditionFailed(weakTagRefusal(`the ETag of ${path}`, ''))

/** Why a create's precondition failed, said of the collection at `path`. */
const CREATE_REFUSALS = {
  'if-match': (path: string) => weakTagRefusal(`the ETag of ${path}`, 'on a create '),
  exists: (path: string) => `If-None-Match: * holds only where nothing exists yet, and ${path} does`,
  current: (path: string) => `If-None-Match names the current ETag of ${path}`
}

/** The 412 of a create on the collection at `path` whose precondition failed, and why. */
export const createPreconditionFailed = (path: string, why: keyof typeof CREATE_REFUSALS): Error =>
  new PreconditionFailed(`${CREATE_REFUSALS[why](path)}; nothing was created`)

/**
 * A create's preconditions (RFC 9110 §13.1.1-2: a server MUST evaluate them
 * before performing any method) on the collection it adds to, whose current
 * representation is its first page as a GET shows it now. That page's tag is
 * weak, so If-Match, which compares strongly, holds only as `*`.
 * If-None-Match fails as `*` (the collection exists) or when it names that
 * tag, which is read only then. If-Unmodified-Since is ignored: a collection
 * has no Last-Modified (§13.1.4). A failed one is 412, and nothing is created.
 */
export async function checkBeforeCreating (headers: IncomingHttpHeaders, path: string, currentTag: () => Promise<EntityTag>): Promise<void> {
  if (failsOnWeakTag(headers['if-match'])) throw createPreconditionFailed(path, 'if-match')
  const tags = parseEntityTags(headers['if-none-match'])
  if (tags === '*') throw createPreconditionFailed(path, 'exists')
  if (tags !== undefined && tags.length > 0 && noneMatch(headers['if-none-match'], await currentTag()) === true) {
    throw createPreconditionFailed(path, 'current')
  }
}

/**
 * Whether a request to a resource that has no representation (nothing a GET
 * shows: the token endpoint, a delivery's resend) carries an If-Match, which
 * is then false whatever it names, `*` included (RFC 9110 §13.1.1): such a
 * method is not performed (412). If-None-Match is then true, and the date
 * conditions need a Last-Modified the resource does not have, so only
 * If-Match can fail there.
 */
export const ifMatchWithoutRepresentation = (headers: IncomingHttpHeaders): boolean => headers['if-match'] !== undefined

/** The 412 of such a request to `path`, saying what was not done. */
export const noRepresentationToMatch = (path: string, notDone: string): Error =>
  new PreconditionFailed(`${path} has no representation for If-Match to name, so If-Match cannot hold (RFC 9110 §13.1.1); ${notDone}`)

/**
 * Whether `header` is the one strong tag whose opaque part is `opaque`, as a
 * client sends back the ETag it was given: a revalidation is then answered
 * without parsing the header (a regular expression, and an object a tag).
 */
const isOnlyTag = (header: string, opaque: string): boolean =>
  header.length === opaque.length + 2 && header.startsWith('"') && header.startsWith(opaque, 1) && header.endsWith('"')

/** If-None-Match uses weak comparison: the opaque parts are compared, weakness ignored. */
export function noneMatch (header: string | undefined, current: EntityTag): boolean | undefined {
  if (header !== undefined && isOnlyTag(header, current.opaque)) return true
  const tags = parseEntityTags(header)
  if (tags === undefined) return undefined
  return tags === '*' || tags.some(tag => tag.opaque === current.opaque)
}

/** Tags a response whose tag is its body's (a list, or any other tagged read): true when the client's If-None-Match already holds it, so the answer is 304. */
export function tagged (request: FastifyRequest, reply: FastifyReply, tag: EntityTag): boolean {
  reply.header('etag', formatEntityTag(tag))
  return noneMatch(request.headers['if-none-match'], tag) === true
}

/**
 * Whether a record last modified at `lastModified` (ISO) changed after the
 * HTTP date `date` (If-Modified-Since, If-Unmodified-Since); undefined when
 * there is no valid date, which both headers then ignore (RFC 9110 §13.1.3-4).
 */
export function modifiedAfter (lastModified: string, date: string | undefined): boolean | undefined {
  if (date === undefined) return undefined
  const dateMs = Date.parse(date)
  if (Number.isNaN(dateMs)) return undefined
  // HTTP dates have second precision; the stored time is truncated the same way.
  return Math.floor(Date.parse(lastModified) / 1000) * 1000 > dateMs
}

/** Whether a GET may answer 304: If-None-Match decides when present, else If-Modified-Since. */
export function notModified (headers: IncomingHttpHeaders, current: EntityTag, lastModified?: string): boolean {
  const byTag = noneMatch(headers['if-none-match'], current)
  if (byTag !== undefined) return byTag
  return lastModified !== undefined && modifiedAfter(lastModified, headers['if-modified-since']) === false
}

const httpDates = new BoundedMap<string, string>(1000)

/** Last-Modified of an ISO timestamp, remembered: formatting a date was 2 % of a GET of one record. */
export function httpDate (iso: string): string {
  return httpDates.remember(iso, () => new Date(iso).toUTCString())
}

/** A weak tag for a response body (lists): equal bodies, equal tags. */
export function bodyTag (payload: string | Buffer): EntityTag {
  return { weak: true, opaque: hash('sha1', payload, 'base64url') }
}

/** A page's weak tag: its body's digest, and what it says of the collection besides (its total, or whether more follow). */
export const pageTag = (digest: string, navigation: string): EntityTag => ({ weak: true, opaque: `${digest}.${navigation}` })
