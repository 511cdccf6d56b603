/**
 * The records a delete takes with it. The database removes the children of
 * `onDelete: 'cascade'` relations itself (ON DELETE CASCADE), so they are read
 * before the delete, inside its own transaction, to give each its own
 * `deleted` event.
 */
import type { Kysely } from 'kysely'
import type { Model, Resource } from '../resources/model.js'
import type { Database } from './dialect.js'

/** Parent ids per query: far under every driver's bound-parameter limit. */
const IDS_PER_QUERY = 500

export function cascades (resource: Resource): boolean {
  return resource.referrers.some(link => link.onDelete === 'cascade')
}

/**
 * Every record that deleting `id` deletes by cascade, down every level, by
 * collection. Each record is listed once even where relations form a cycle.
 */
export async function cascadedIds (executor: Kysely<Database>, model: Model, resource: Resource, id: number): Promise<Map<string, number[]>> {
  const seen = new Map<string, Set<number>>([[resource.collection, new Set([id])]])
  const found = new Map<string, number[]>()
  const levels: Array<{ resource: Resource, ids: readonly number[] }> = [{ resource, ids: [id] }]
  for (let level = levels.shift(); level !== undefined; level = levels.shift()) {
    // Declared from either side: a belongs-to with onDelete 'cascade' needs no has-many back.
    for (const link of level.resource.referrers) {
      if (link.onDelete !== 'cascade') continue
      const known = seen.get(link.child) ?? new Set<number>()
      seen.set(link.child, known)
      const fresh: number[] = []
      for (let i = 0; i < level.ids.length; i += IDS_PER_QUERY) {
        const rows = await executor.selectFrom(link.child).select('id').where(link.foreignKey, 'in', level.ids.slice(i, i + IDS_PER_QUERY)).execute()
        for (const row of rows) {
          const childId = Number(row.id)
          if (known.has(childId)) continue
          known.add(childId)
          fresh.push(childId)
        }
      }
      if (fresh.length === 0) continue
      found.set(link.child, [...(found.get(link.child) ?? []), ...fresh])
      levels.push({ resource: model.get(link.child), ids: fresh })
    }
  }
  return found
}
