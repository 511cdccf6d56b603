/**
 * The `links` of a representation and the canonical paths they use. Links are
 * always `/v{current}/…`, whatever form the request came in.
 */
import { CURRENT_VERSION } from '../http/versions.js'
import type { StoredRecord } from '../store/store.js'
import type { Resource } from './model.js'

export const collectionPath = (collection: string): string => `/v${CURRENT_VERSION}/${collection}`

export const itemPath = (collection: string, id: number): string => `${collectionPath(collection)}/${id}`

export function linksOf (resource: Resource, record: StoredRecord): Record<string, string> {
  const self = itemPath(resource.collection, record.id)
  const links: Record<string, string> = { self }
  for (const child of resource.children) links[child.name] = `${self}/${child.name}`
  for (const parent of resource.parents) {
    const key = record.values[parent.foreignKey]
    if (typeof key === 'number') links[parent.name] = itemPath(parent.parent, key)
  }
  return links
}

/** The representation clients receive: fields (never write-only ones), links and timestamps. */
export function represent (resource: Resource, record: StoredRecord): Record<string, unknown> {
  const body: Record<string, unknown> = { id: record.id }
  for (const [name, value] of Object.entries(record.values)) {
    if (resource.fields.get(name)?.writeOnly !== true) body[name] = value
  }
  body.links = linksOf(resource, record)
  body.createdAt = record.createdAt
  body.updatedAt = record.updatedAt
  return body
}

/** What form encoding leaves as it is: most names and values (`page=2`, `sort=-priority`) need no encoder. */
const UNENCODED = /^[\w*.-]*$/

/** One query parameter, form-encoded; brackets, commas, colons and stars are legal in a query and far easier to read unescaped. */
function parameter (name: string, value: string): string {
  if (UNENCODED.test(name) && UNENCODED.test(value)) return `${name}=${value}`
  return new URLSearchParams([[name, value]]).toString()
    .replace(/%5B/g, '[').replace(/%5D/g, ']').replace(/%2C/g, ',').replace(/%3A/g, ':').replace(/%2A/g, '*')
}

/**
 * The same query with one parameter set to a value (in place if present,
 * else last), keeping every other parameter: `at(value)` for each link of a
 * response, the query parsed once for all of them.
 */
export function withParameter (path: string, search: string, name: string): (value: string) => string {
  const before: string[] = []
  const after: string[] = []
  let seen = false
  for (const [key, current] of new URLSearchParams(search)) {
    if (key === name) seen = true
    else (seen ? after : before).push(parameter(key, current))
  }
  return value => `${path}?${[...before, parameter(name, value), ...after].join('&')}`
}

/** One RFC 8288 link: `<target>; rel="rel"`. */
export const link = (target: string, rel: string): string => `<${target}>; rel="${rel}"`

/** RFC 8288 Link value for page-based navigation: first, prev, next, last as they apply. */
export function pageLinks (path: string, search: string, page: number, limit: number, total: number): string {
  const last = Math.max(1, Math.ceil(total / limit))
  const withPage = withParameter(path, search, 'page')
  const at = (target: number): string => withPage(String(target))
  return [
    link(at(1), 'first'),
    ...(page > 1 ? [link(at(Math.min(page - 1, last)), 'prev')] : []),
    ...(page < last ? [link(at(page + 1), 'next')] : []),
    link(at(last), 'last')
  ].join(', ')
}

/** Link value for keyset navigation: first (a fresh scan) and next while there is more. */
export function cursorLinks (path: string, search: string, next: string | undefined): string {
  const at = withParameter(path, search, 'cursor')
  return [
    link(at(''), 'first'),
    ...(next === undefined ? [] : [link(at(next), 'next')])
  ].join(', ')
}
