/**
 * A collection's validated query string → a store query. The route schema
 * has already parsed every value by its type and refused unknown parameters;
 * this checks what a schema cannot (sort keys, filter names, field names,
 * cursors) and assembles the conditions, order and window.
 */
import { invalid, type ProblemIssue } from '../errors.js'
import { fieldFilterOf } from '../http/query-parameters.js'
import type { Condition, FilterContext, FilterOperator } from './define.js'
import type { CursorCodec } from './cursor.js'
import { storedForm, type Resource } from './model.js'
import { DEFAULT_LIMIT, selectableFields, sortKeys } from './query-schema.js'
import type { StoredRecord, ListQuery, SortKey } from '../store/store.js'

export interface ListRequest {
  readonly store: ListQuery
  /** `cursor` for keyset pagination, `page` otherwise. */
  readonly mode: 'page' | 'cursor'
  readonly page: number
  readonly limit: number
  /** The sort in canonical form (`name,-id`), which cursors are bound to. */
  readonly sort: string
  /** Sparse fieldset, when asked for. */
  readonly fields?: readonly string[]
}

export interface ListContext {
  readonly now: Date
  readonly cursors: CursorCodec
}

type RawQuery = Readonly<Record<string, unknown>>

const issue = (name: string, detail: string): ProblemIssue => ({ in: 'query', pointer: `/${name}`, detail })
const list = (value: string): string[] => value.split(',').map(part => part.trim())

export function filterContext (now: Date): FilterContext {
  return { now, today: now.toISOString().slice(0, 10) }
}

function parseSort (resource: Resource, raw: unknown, issues: ProblemIssue[]): SortKey[] {
  if (raw === undefined || raw === 'asc') return [{ field: 'id', direction: 'asc' }]
  if (raw === 'desc') return [{ field: 'id', direction: 'desc' }]
  const allowed = sortKeys(resource)
  const keys: SortKey[] = []
  for (const token of list(String(raw))) {
    const match = /^(-)?([a-zA-Z][a-zA-Z0-9]*)(?::(asc|desc))?$/.exec(token)
    if (match === null || (match[1] !== undefined && match[3] !== undefined)) {
      issues.push(issue('sort', `"${token}" is not a sort key; write key, -key or key:desc`))
      continue
    }
    const field = match[2]!
    if (!allowed.includes(field)) {
      issues.push(issue('sort', `cannot sort by "${field}"; sortable: ${allowed.join(', ')}`))
      continue
    }
    // A key given twice is a contradiction (`name,-name`) or a slip: either way, dropping one would sort otherwise than asked.
    if (keys.some(key => key.field === field)) {
      issues.push(issue('sort', `sorts by "${field}" twice; give each key once`))
      continue
    }
    keys.push({ field, direction: match[1] === '-' || match[3] === 'desc' ? 'desc' : 'asc' })
  }
  const last = keys.at(-1)
  // Ties always break by id in the last key's direction, so pages never overlap or skip.
  if (last !== undefined && !keys.some(key => key.field === 'id')) keys.push({ field: 'id', direction: last.direction })
  return keys.length === 0 ? [{ field: 'id', direction: 'asc' }] : keys
}

export const canonicalSort = (keys: readonly SortKey[]): string =>
  keys.map(key => key.direction === 'desc' ? `-${key.field}` : key.field).join(',')

function namedFilters (resource: Resource, raw: unknown, now: Date, issues: ProblemIssue[]): Condition[] {
  if (raw === undefined) return []
  // Made only for a filter that is a function of it: formatting today's date was 1.4 % of a filtered list.
  let context: FilterContext | undefined
  const known = resource.definition.filters
  const conditions: Condition[] = []
  for (const name of list(String(raw))) {
    const filter = Object.hasOwn(known, name) ? known[name] : undefined
    if (filter === undefined) {
      const names = Object.keys(known)
      issues.push(issue('filter', `unknown filter "${name}"; known: ${names.length === 0 ? 'none' : names.join(', ')}`))
      continue
    }
    conditions.push(...(typeof filter === 'function' ? filter(context ??= filterContext(now)) : filter))
  }
  return conditions
}

function fieldFilters (resource: Resource, raw: RawQuery): Condition[] {
  const conditions: Condition[] = []
  for (const [key, value] of Object.entries(raw)) {
    // The keys passed the route's query schema, so each names a declared parameter.
    const filter = fieldFilterOf(key)
    if (filter === undefined || !resource.definition.filterable.includes(filter.field)) continue
    // Filterable names are fields (define.ts checks), compared in the form they are stored in.
    const field = resource.fields.get(filter.field)!
    conditions.push({ field: filter.field, op: (filter.op ?? 'eq') as FilterOperator, value: storedForm(field, value) })
  }
  return conditions
}

function sparseFields (resource: Resource, raw: unknown, issues: ProblemIssue[]): string[] | undefined {
  if (raw === undefined) return undefined
  const allowed = selectableFields(resource)
  const fields: string[] = []
  for (const name of list(String(raw))) {
    if (name === 'id' || name === 'links') continue
    if (allowed.includes(name)) fields.push(name)
    else issues.push(issue('fields', `unknown field "${name}"; selectable: ${allowed.join(', ')}`))
  }
  return fields
}

const containsNul = (value: unknown): boolean => typeof value === 'string' ? value.includes('\u0000') : Array.isArray(value) && value.some(containsNul)

function hasNul (raw: RawQuery): string | undefined {
  for (const name in raw) if (containsNul(raw[name])) return name
  return undefined
}

function cursorPosition (raw: RawQuery, sort: string, cursors: CursorCodec, issues: ProblemIssue[]): readonly unknown[] | undefined {
  const token = raw.cursor
  if (token === undefined || token === '') return undefined
  const position = cursors.decode(String(token))
  if (position === undefined) {
    issues.push(issue('cursor', 'is not a cursor this service issued, or it was altered; start again with cursor='))
    return undefined
  }
  if (position.sort !== sort) {
    issues.push(issue('cursor', `belongs to sort=${position.sort}; repeat that sort, or start again with cursor=`))
    return undefined
  }
  return position.values
}

/** What the schema cannot check of a query, read; every problem found goes to `issues`. */
function checkListQuery (resource: Resource, raw: RawQuery, context: ListContext, issues: ProblemIssue[]) {
  const nul = hasNul(raw)
  if (nul !== undefined) issues.push(issue(nul, 'must not contain NUL characters'))
  const orderBy = parseSort(resource, raw.sort, issues)
  const sort = canonicalSort(orderBy)
  const where = [...namedFilters(resource, raw.filter, context.now, issues), ...fieldFilters(resource, raw)]
  const fields = sparseFields(resource, raw.fields, issues)
  const mode: ListRequest['mode'] = raw.cursor === undefined ? 'page' : 'cursor'
  if (mode === 'cursor' && raw.page !== undefined) issues.push(issue('cursor', 'cannot be combined with page; use one or the other'))
  const after = cursorPosition(raw, sort, context.cursors, issues)
  return { orderBy, sort, where, fields, mode, after }
}

/**
 * The problems of a query the schema has already refused, beyond those it
 * found (sort keys, filter names, field names, cursors), so that one 400
 * names them all.
 */
export function listQueryIssues (resource: Resource, raw: RawQuery, context: ListContext): ProblemIssue[] {
  const issues: ProblemIssue[] = []
  checkListQuery(resource, raw, context, issues)
  return issues
}

export function parseListQuery (resource: Resource, raw: RawQuery, context: ListContext): ListRequest {
  const issues: ProblemIssue[] = []
  const { orderBy, sort, where, fields, mode, after } = checkListQuery(resource, raw, context, issues)
  if (issues.length > 0) throw invalid(issues)

  const page = typeof raw.page === 'number' ? raw.page : 1
  const limit = typeof raw.limit === 'number' ? raw.limit : DEFAULT_LIMIT
  return {
    mode,
    page,
    limit,
    sort,
    ...(fields === undefined ? {} : { fields }),
    store: {
      where,
      orderBy,
      // One extra row in cursor mode tells whether there is a next page without counting.
      limit: mode === 'cursor' ? limit + 1 : limit,
      offset: mode === 'cursor' ? 0 : (page - 1) * limit,
      ...(after === undefined ? {} : { after })
    }
  }
}

/** The position of a record under a sort: what the next cursor carries. */
export function positionOf (record: StoredRecord, orderBy: readonly SortKey[]): unknown[] {
  return orderBy.map(({ field }) => {
    if (field === 'id') return record.id
    if (field === 'createdAt') return record.createdAt
    if (field === 'updatedAt') return record.updatedAt
    return record.values[field] ?? null
  })
}
