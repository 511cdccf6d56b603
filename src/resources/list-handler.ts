/**
 * Answering a list: the store query from the query string, X-Total-Count and
 * page links, or a keyset window and its next cursor, and sparse fieldsets.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { instanceOf } from '../http/instance.js'
import type { StoredRecord } from '../store/store.js'
import type { Condition } from './define.js'
import type { CursorCodec } from './cursor.js'
import { cursorLinks, pageLinks, represent } from './links.js'
import type { Resource } from './model.js'
import { parseListQuery, positionOf } from './query.js'
import { visibility } from './visibility.js'

/** A sparse fieldset keeps id and links, and only the named fields. */
function pick (body: Record<string, unknown>, fields: readonly string[] | undefined): Record<string, unknown> {
  if (fields === undefined) return body
  const picked: Record<string, unknown> = { id: body.id, links: body.links }
  for (const name of fields) if (body[name] !== undefined) picked[name] = body[name]
  return picked
}

function searchOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? '' : url.slice(query + 1)
}

export async function sendList (request: FastifyRequest, reply: FastifyReply, target: Resource, scope: Condition[], cursors: CursorCodec): Promise<unknown> {
  const list = parseListQuery(target, request.query as Record<string, unknown>, { now: new Date(), cursors })
  const where = [...scope, ...visibility(request, target), ...list.store.where]
  const { store } = request.server
  const path = instanceOf(request.url).replace(/\/+$/, '')
  const search = searchOf(request.url)
  let records: StoredRecord[]
  if (list.mode === 'page') {
    const [page, total] = await Promise.all([store.list(target, { ...list.store, where }), store.count(target, where)])
    records = page
    reply.header('x-total-count', total).header('link', pageLinks(path, search, list.page, list.limit, total))
  } else {
    const window = await store.list(target, { ...list.store, where })
    records = window.slice(0, list.limit)
    const last = records.at(-1)
    const next = window.length > list.limit && last !== undefined
      ? cursors.encode({ sort: list.sort, values: positionOf(last, list.store.orderBy) })
      : undefined
    reply.header('link', cursorLinks(path, search, next))
  }
  return await reply.send(records.map(record => pick(represent(target, record), list.fields)))
}
