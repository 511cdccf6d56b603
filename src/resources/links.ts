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
