/**
 * The query-string schema of a collection, derived from the definition. It
 * both validates (every value parsed strictly by its field's type; unknown
 * parameters refused) and documents every parameter in OpenAPI: page, limit,
 * sort, filter, fields, cursor, and `field` / `field[op]` per filterable field.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox'
import { EQUALITY_OPERATORS, type FilterOperator } from './define.js'
import type { Field, Resource } from './model.js'

export const DEFAULT_LIMIT = 20
export const MAX_PAGE = 100_000_000
/** More values than this in one `in` list is refused rather than sent to the database. */
export const MAX_IN_VALUES = 100

/** Names every resource can be sorted by, besides its declared sortable fields. */
export const ALWAYS_SORTABLE = ['id', 'name', 'createdAt', 'updatedAt'] as const

/** The value schema an order comparison (`lt` … `gte`) takes: the field's type, enum and format, without its bounds. */
export function filterValueSchema (field: Field): TSchema {
  const { type, enum: values, format } = field.schema as { type?: string, enum?: unknown[], format?: string }
  return { ...(type === undefined ? {} : { type }), ...(values === undefined ? {} : { enum: values }), ...(format === undefined ? {} : { format }) } as TSchema
}

/** Keywords that bound the values a field holds. */
const VALUE_BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern'] as const

/**
 * The value schema an equality (`EQUALITY_OPERATORS`) takes: the field's
 * bounds too. No record holds a value outside them, so `priority=33` (for 3)
 * would match nothing and `priority[ne]=33` everything, silently; it is
 * refused as an enum value that does not exist is. An order comparison keeps
 * only the type: `priority[lt]=10` is a fair way to ask for all.
 */
export function equalityValueSchema (field: Field): TSchema {
  const schema = field.schema as Record<string, unknown>
  const bounds = Object.fromEntries(VALUE_BOUNDS.filter(keyword => schema[keyword] !== undefined).map(keyword => [keyword, schema[keyword]]))
  return { ...filterValueSchema(field), ...bounds } as TSchema
}

/** Formats whose strings are points in time: ordered, and spelled by a rule rather than written as text. */
const TEMPORAL_FORMATS = new Set(['date', 'date-time', 'time'])

/** Operators that make sense for a field: order needs an ordered type, `like` free text. */
export function operatorsFor (field: Field): FilterOperator[] {
  const schema = field.schema as { type?: string, enum?: unknown[], format?: string }
  // A set of strings has no order a client means (`status=todo`); a set of numbers has (`level[gte]=5`).
  if (field.kind === 'boolean' || (schema.enum !== undefined && field.kind === 'string')) return ['eq', 'ne', 'in']
  // Text can be matched by pattern (`email[like]=*@example.com`); a date or time only compared.
  if (field.kind === 'string' && !TEMPORAL_FORMATS.has(schema.format ?? '')) return ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'like']
  return ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in']
}

/** What each operator asks of a record's value, worded after "Only tasks whose priority …". */
const OPERATOR_TEXT: Record<FilterOperator, string> = {
  eq: 'equals this value',
  ne: 'differs from this value (records without a value match)',
  lt: 'is less than this value',
  lte: 'is at most this value',
  gt: 'is greater than this value',
  gte: 'is at least this value',
  in: 'is one of these comma-separated values (or the parameter repeated)',
  like: 'matches this pattern, case-insensitively, with `*` as the only wildcard'
}

const sortKeysOf = new WeakMap<Resource, readonly string[]>()

/** The keys `sort=` accepts: worked out once per resource, as every list request asks. */
export function sortKeys (resource: Resource): readonly string[] {
  let keys = sortKeysOf.get(resource)
  if (keys === undefined) {
    keys = Object.freeze([...new Set([...ALWAYS_SORTABLE, ...resource.definition.sortable])])
    sortKeysOf.set(resource, keys)
  }
  return keys
}

/** Names `fields=` may select (id and links always come). */
export function selectableFields (resource: Resource): string[] {
  const fields = [...resource.fields.values()].filter(field => !field.writeOnly).map(field => field.name)
  return [...fields, ...(resource.owner === undefined ? [] : [resource.owner]), 'createdAt', 'updatedAt']
}

function fieldFilterProperties (resource: Resource): TProperties {
  const properties: TProperties = {}
  for (const name of resource.definition.filterable) {
    const field = resource.fields.get(name)!
    const ordered = filterValueSchema(field)
    const equal = equalityValueSchema(field)
    properties[name] = Type.Optional({ ...equal, description: `Only ${resource.collection} whose ${name} ${OPERATOR_TEXT.eq}.` } as TSchema)
    for (const op of operatorsFor(field)) {
      const description = `Only ${resource.collection} whose ${name} ${OPERATOR_TEXT[op]}.`
      properties[`${name}[${op}]`] = Type.Optional(
        op === 'in'
          ? Type.Array(equal, { minItems: 1, maxItems: MAX_IN_VALUES, description })
          : op === 'like' ? Type.String({ description }) : { ...(EQUALITY_OPERATORS.has(op) ? equal : ordered), description } as TSchema
      )
    }
  }
  return properties
}

export function listQuerySchema (resource: Resource, maxLimit: number): TSchema {
  const filters = Object.keys(resource.definition.filters)
  return Type.Object({
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: 'Page number, from 1 (default 1). Not with `cursor`.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, description: `Items per page, 1 to ${maxLimit} (default ${DEFAULT_LIMIT}).` })),
    sort: Type.Optional(Type.String({
      description: `\`asc\` or \`desc\` (by id), or a comma list of keys, each given once, as \`key\`, \`-key\` or \`key:desc\`. Keys: ${sortKeys(resource).join(', ')}. Ties break by id; missing values sort last.`,
      examples: ['-createdAt', 'name,-id']
    })),
    ...(filters.length === 0
      ? {}
      : { filter: Type.Optional(Type.String({ description: `Comma list of named filters, all applied: ${filters.join(', ')}.` })) }),
    fields: Type.Optional(Type.String({ description: `Comma list of fields to return (id and links always come): ${selectableFields(resource).join(', ')}.` })),
    cursor: Type.Optional(Type.String({ description: 'Keyset pagination: empty to start, then the value from the `next` link. No X-Total-Count. Not with `page`.' })),
    ...fieldFilterProperties(resource)
  }, { additionalProperties: false })
}
