/**
 * Pages of an admin collection (API keys, OAuth clients, webhook
 * subscriptions), as every collection pages (CONTRACT §4): `page` and
 * `limit`, X-Total-Count, and first/prev/next/last links. One difference,
 * kept from before these lists paged: a request with neither parameter gets
 * every live item, not a first page. These lists are where an admin audits
 * who holds access, and a client written when they were whole must not
 * mistake the first 20 for all of them.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { linkBase, searchOf } from '../http/instance.js'
import { pageLinks } from '../resources/links.js'
import { DEFAULT_LIMIT, MAX_PAGE } from '../resources/query-schema.js'
import { EXAMPLE_TOTAL, pageLinksExample } from '../resources/header-examples.js'
import { header, optionalHeader, type HeaderDoc } from '../resources/responses.js'
import type { LiveItems } from '../store/live-items.js'
import { adminListHeaders, type AdminList } from './admin-conditional.js'

/** The query string of an admin list. */
export function adminPageQuery (maxLimit: number) {
  return Type.Object({
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: `Page number, from 1 (default 1). With \`page\` or \`limit\` the list is paged (${DEFAULT_LIMIT} items a page unless \`limit\` says otherwise); with neither, every item comes.` })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, description: `Items per page, 1 to ${maxLimit} (default ${DEFAULT_LIMIT} when paged).` }))
  }, { additionalProperties: false })
}

interface AdminPageQuery { readonly page?: number, readonly limit?: number }

/** An admin list's answers, shown for the second page of the list at `path`, whose items are like `example`. */
export function adminPageHeaders (path: string, example: object): Record<string, HeaderDoc> {
  const headers = { 'x-total-count': String(EXAMPLE_TOTAL), link: pageLinksExample(path) }
  return {
    'X-Total-Count': header('integer', 'How many items there are, in all pages.', EXAMPLE_TOTAL),
    Link: optionalHeader('string', 'RFC 8288 links to the first, prev, next and last pages, as they apply (paged requests only).', headers.link),
    ...adminListHeaders({ items: [example], headers })
  }
}

/** The items the request asks for, in id order, as `view` shows them, with X-Total-Count and, when paged, the page links. */
export async function adminPage<T> (request: FastifyRequest, items: LiveItems<T>, view: (item: T) => object): Promise<AdminList> {
  const { page, limit } = request.query as AdminPageQuery
  if (page === undefined && limit === undefined) {
    const all = await items.list()
    return { items: all.map(view), headers: { 'x-total-count': String(all.length) } }
  }
  const size = limit ?? DEFAULT_LIMIT
  const at = page ?? 1
  const [found, total] = await Promise.all([items.list({ offset: (at - 1) * size, limit: size }), items.count()])
  const links = pageLinks(linkBase(request.url), searchOf(request.url), at, size, total)
  return { items: found.map(view), headers: { 'x-total-count': String(total), link: links } }
}
