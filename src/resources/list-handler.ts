/**
 * Answering a list: the store query from the query string, X-Total-Count and
 * page links, or a keyset window and its next cursor, sparse fieldsets, and
 * the page's weak ETag and If-None-Match. The tag covers what the page says
 * of the collection as well as its body: the total, or whether a next cursor
 * page exists. A tag of the body alone revalidated page 1 of a collection
 * that had grown (304), and the client kept the old X-Total-Count and `last`
 * link, or a cursor page without the `next` link it now has. Being weak, the
 * tag satisfies no If-Match but `*`: any other is 412 before the store is read.
 * A create asks here for its collection's current tag, which its
 * If-None-Match is compared with.
 */
import type { TSchema } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { refuseWithAll } from '../http/attached-validation.js'
import { bodyTag, failsOnWeakTag, listIfMatchFailed, pageTag, tagged, type EntityTag } from '../http/conditional.js'
import { keptBody, sendKept, type KeptBody } from '../http/content-coding.js'
import { linkBase, searchOf } from '../http/instance.js'
import { JSON_CONTENT_TYPE } from '../http/json-body.js'
import type { StoredRecord } from '../store/store.js'
import type { Condition } from './define.js'
import type { CursorCodec } from './cursor.js'
import { pageSchema } from './derive.js'
import { cursorLinks, pageLinks, represent } from './links.js'
import type { Resource } from './model.js'
import { listQueryIssues, parseListQuery, positionOf, type ListRequest } from './query.js'
import { visibility } from './visibility.js'

/** A sparse fieldset keeps id and links, and only the named fields. */
function pick (body: Record<string, unknown>, fields: readonly string[] | undefined): Record<string, unknown> {
  if (fields === undefined) return body
  const picked: Record<string, unknown> = { id: body.id, links: body.links }
  for (const name of fields) if (body[name] !== undefined) picked[name] = body[name]
  return picked
}

type Serializer = (payload: unknown) => string

/** A page as sent: its body, as the route's response schema serializes it (with its codings so far), and the body's digest. */
interface RenderedPage extends KeptBody {
  readonly serializer: Serializer
  readonly fields: string
  /** How many of the store's rows were sent: a cursor page sends one fewer than it read, a page as many. */
  readonly sent: number
  readonly digest: string
}

/**
 * The body of a page, kept with the page for as long as the store gives back
 * the very same one (it remembers pages while the data is unchanged:
 * sql-store.ts): building the representations, serializing and hashing them
 * cost as much again as reading the page.
 */
const renderedPages = new WeakMap<readonly StoredRecord[], RenderedPage>()

/** `records` as sent, kept with `read`, the store's answer they come from. */
function render (serializer: Serializer, target: Resource, read: readonly StoredRecord[], records: readonly StoredRecord[], fields: readonly string[] | undefined): RenderedPage {
  const fieldList = fields?.join(',') ?? ''
  const kept = renderedPages.get(read)
  // `?limit=21` and `?limit=20&cursor=` read the same 21 rows; only the first sends them all.
  if (kept?.serializer === serializer && kept.fields === fieldList && kept.sent === records.length) return kept
  const body = serializer(records.map(record => pick(represent(target, record), fields)))
  const page = { ...keptBody(body), serializer, fields: fieldList, sent: records.length, digest: bodyTag(body).opaque }
  renderedPages.set(read, page)
  return page
}

/**
 * A list's query string that failed its schema (the list routes attach
 * validation errors rather than answer them) is refused with every offending
 * parameter: the schema's and also the sort keys, filter and field names and
 * cursor it could not check. Before anything is read, a parent included.
 */
export function refuseInvalidQuery (request: FastifyRequest, target: Resource, cursors: CursorCodec): void {
  if (request.validationError === undefined) return
  refuseWithAll(request, 'querystring', listQueryIssues(target, request.query as Record<string, unknown>, { now: new Date(), cursors }))
}

/** A list route's own serializer for its pages. */
function routeSerializer (reply: FastifyReply, target: Resource): Serializer {
  const serializer = reply.getSerializationFunction('200', 'application/json') as Serializer | undefined
  if (serializer === undefined) throw new Error(`the list of ${target.collection} has no response schema to serialize it with`)
  return serializer
}

/** What a page is sent with: its body, its weak tag and the headers that say where it stands in the collection. */
interface ListAnswer {
  readonly page: RenderedPage
  readonly tag: EntityTag
  readonly headers: Readonly<Record<string, string | number>>
}

/** Reads and renders the page `list` asks for, of `target`'s records under `scope` that the caller may see. */
async function answerList (request: FastifyRequest, serializer: Serializer, target: Resource, scope: Condition[], cursors: CursorCodec, list: ListRequest): Promise<ListAnswer> {
  const where = [...scope, ...visibility(request, target), ...list.store.where]
  const { store } = request.server
  const path = linkBase(request.url)
  const search = searchOf(request.url)
  // What the store answered (the page, or a cursor page's window of one more row) and what is sent of it.
  let read: StoredRecord[]
  let records: StoredRecord[]
  // What the page says of the collection besides its records: part of its tag.
  let navigation: string
  let headers: Record<string, string | number>
  if (list.mode === 'page') {
    const { records: page, total } = await store.countedPage(target, { ...list.store, where })
    read = records = page
    navigation = String(total)
    headers = { 'x-total-count': total, link: pageLinks(path, search, list.page, list.limit, total) }
  } else {
    read = await store.list(target, { ...list.store, where })
    records = read.slice(0, list.limit)
    const last = records.at(-1)
    const next = read.length > list.limit && last !== undefined
      ? cursors.encode({ sort: list.sort, values: positionOf(last, list.store.orderBy) })
      : undefined
    navigation = next === undefined ? 'end' : 'more'
    headers = { link: cursorLinks(path, search, next) }
  }
  const page = render(serializer, target, read, records, list.fields)
  return { page, tag: pageTag(page.digest, navigation), headers }
}

export async function sendList (request: FastifyRequest, reply: FastifyReply, target: Resource, scope: Condition[], cursors: CursorCodec): Promise<unknown> {
  const list = parseListQuery(target, request.query as Record<string, unknown>, { now: new Date(), cursors })
  if (failsOnWeakTag(request.headers['if-match'])) throw listIfMatchFailed()
  const { page, tag, headers } = await answerList(request, routeSerializer(reply, target), target, scope, cursors, list)
  reply.headers(headers)
  if (tagged(request, reply, tag)) return await reply.code(304).send()
  // Coded here rather than by @fastify/compress, so that the coded body is kept with the page (content-coding.ts).
  return await sendKept(request, reply.type(JSON_CONTENT_TYPE), page)
}

/** One page schema per resource: Fastify keeps what it compiles for a schema by the schema object. */
const pageSchemas = new WeakMap<Resource, TSchema>()

/**
 * The tag a GET of the collection a create adds to would answer with now
 * (its first page, as the caller sees it), for the create's If-None-Match.
 * A create's route has no page serializer of its own; the page's schema is
 * compiled for it once, and writes the same body as the list route's.
 */
export async function currentListTag (request: FastifyRequest, reply: FastifyReply, target: Resource, scope: Condition[], cursors: CursorCodec): Promise<EntityTag> {
  let schema = pageSchemas.get(target)
  if (schema === undefined) pageSchemas.set(target, schema = pageSchema(target))
  const serializer = reply.compileSerializationSchema(schema, '200', 'application/json') as Serializer
  const list = parseListQuery(target, {}, { now: new Date(), cursors })
  return (await answerList(request, serializer, target, scope, cursors, list)).tag
}
