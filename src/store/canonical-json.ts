/**
 * JSON text for an object or array column on SQLite, which compares the text
 * itself: every object's members in code-point order, so equal values are
 * equal text whatever order a client wrote the members in. A `unique` object
 * field then clashes as it does on PostgreSQL, whose jsonb orders members
 * itself.
 */

const byKey = ([a]: [string, unknown], [b]: [string, unknown]): number => a < b ? -1 : a > b ? 1 : 0

function ordered (_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  return Object.fromEntries(Object.entries(value).sort(byKey))
}

export const canonicalJson = (value: unknown): string => JSON.stringify(value, ordered)
