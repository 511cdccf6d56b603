/**
 * Conditional requests on the admin collections (API keys, clients, webhook
 * subscriptions and their deliveries), as on every resource: their answers
 * carry an ETag, If-None-Match revalidates (304) and If-Match guards a read or
 * a revocation (412). These views have no version column and no Last-Modified,
 * so an item's tag is a digest of its view (the same view, the same tag: a
 * strong validator) and a list's is the weak digest of its body and headers; the
 * date-based conditions do not apply to them and are ignored (RFC 9110 §13.1.3-4).
 */
import { hash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { PreconditionFailed } from '../errors.js'
import { bodyTag, failsOnWeakTag, formatEntityTag, listIfMatchFailed, noneMatch, notModified, preconditionFailed, tagged, type EntityTag } from '../http/conditional.js'
import { header, type HeaderDoc } from '../resources/responses.js'

/** An item's strong tag: JSON.stringify of a view built the same way is the same text. */
export function viewTag (view: object): EntityTag {
  return { weak: false, opaque: hash('sha256', JSON.stringify(view), 'base64url').slice(0, 22) }
}

/** What an admin list answers with: its items, and headers that go with them (a page's Link). */
export interface AdminList {
  readonly items: readonly object[]
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * A list's answer: 412 for an If-Match its weak tag cannot satisfy, else the
 * items with their ETag and headers, or 304, with the same headers, when the
 * client holds them. `read` runs first, so the 404 of a list whose owner is
 * gone comes before the 412.
 */
export async function sendAdminList (request: FastifyRequest, reply: FastifyReply, read: () => Promise<AdminList>): Promise<unknown> {
  const list = await read()
  if (failsOnWeakTag(request.headers['if-match'])) throw listIfMatchFailed()
  reply.headers(list.headers ?? {})
  if (tagged(request, reply, adminListTag(list))) return await reply.code(304).send()
  return list.items
}

/**
 * A list's weak tag. It covers what the headers say of the list too (its total, whether a next page exists):
 * a tag of the body alone would revalidate a first page whose collection had grown, and keep the old total and links.
 */
export const adminListTag = ({ items, headers = {} }: AdminList): EntityTag => bodyTag(JSON.stringify([items, headers]))

/** An admin item's answers carry its tag: documented with the tag of `example`, an item as a GET shows it. */
export const adminItemHeaders = (example: object): Record<string, HeaderDoc> => ({
  ETag: header('string', 'Strong entity tag of the item as a GET shows it (without any secret): send it in If-None-Match to revalidate, or in If-Match to remove only what you saw.', formatEntityTag(viewTag(example)))
})

/** An admin list's answers carry its weak tag: documented with the tag of `example`. */
export const adminListHeaders = (example: AdminList): Record<string, HeaderDoc> => ({
  ETag: header('string', 'Weak entity tag of this list: send it in If-None-Match to revalidate.', formatEntityTag(adminListTag(example)))
})

/** A create's 201: Location, the ETag of the item as a GET shows it (without its secret), and the item with its secret, shown only now. */
export async function sendAdminCreated (reply: FastifyReply, location: string, item: object, secret: Readonly<Record<string, string>>): Promise<unknown> {
  return await reply.code(201).header('location', location).header('etag', formatEntityTag(viewTag(item))).send({ ...item, ...secret })
}

/** An item's answer: 412 when If-Match names another state, else the item with its ETag, or 304 when the client holds it. */
export async function sendAdminItem (request: FastifyRequest, reply: FastifyReply, noun: string, item: object): Promise<unknown> {
  const tag = viewTag(item)
  if (preconditionFailed(request.headers, tag) !== undefined) throw changedSince(noun)
  reply.header('etag', formatEntityTag(tag))
  if (notModified(request.headers, tag)) return await reply.code(304).send()
  return item
}

/** Before an item is removed: If-Match must name its current state, and If-None-Match must not (`*`: it exists), or nothing is removed (412). */
export function checkBeforeRemoving (request: FastifyRequest, noun: string, item: object): void {
  const tag = viewTag(item)
  if (preconditionFailed(request.headers, tag) !== undefined) throw changedSince(noun)
  if (noneMatch(request.headers['if-none-match'], tag) === true) {
    throw new PreconditionFailed(`If-None-Match names this ${noun}'s current state (or is *, and it exists); nothing was removed`)
  }
}

/** The 412 of an item whose If-Match names another state. */
export const changedSince = (noun: string): Error => new PreconditionFailed(`the ${noun} has changed since that ETag (or is not that one); GET it again`)
