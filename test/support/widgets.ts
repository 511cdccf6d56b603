// A test-defined resource with a field of every kind the engine stores (integer, number, boolean,
// enum of strings and of numbers, date-time, date, array, object, union of objects, defaults, a unique field and a
// self-relation), and random values for it: mostly valid, now and then not.
import { Type } from '@sinclair/typebox'
import { belongsTo, defineResource, hasMany } from '../../src/resources/define.js'
import type { Json } from '../helper.js'
import type { FilterOperator } from './record-model.js'
import type { Random } from './random.js'
import { Shape } from './shapes.js'

export const widgets = defineResource({
  collection: 'widgets',
  fields: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 20 }),
    count: Type.Optional(Type.Integer({ minimum: -5, maximum: 1000 })),
    ratio: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    active: Type.Boolean({ default: true }),
    kind: Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Literal('c')], { default: 'a' }),
    level: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(5), Type.Literal(10)])),
    when: Type.Optional(Type.String({ format: 'date-time' })),
    day: Type.Optional(Type.String({ format: 'date' })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 5 }), { maxItems: 3 })),
    meta: Type.Optional(Type.Object({ color: Type.String(), size: Type.Optional(Type.Integer()) }, { additionalProperties: false })),
    shape: Type.Optional(Shape),
    label: Type.Optional(Type.String({ maxLength: 8 })),
    note: Type.String({ default: 'none' }),
    parentId: Type.Optional(Type.Integer())
  }),
  relations: {
    parent: belongsTo('widgets', { foreignKey: 'parentId' }),
    children: hasMany('widgets', { foreignKey: 'parentId', onDelete: 'cascade' })
  },
  unique: ['label'],
  filterable: ['count', 'ratio', 'active', 'kind', 'level', 'when', 'day', 'name', 'label'],
  sortable: ['count', 'ratio', 'active', 'kind', 'level', 'when', 'day', 'label']
})

export const WIDGET_FIELDS = Object.keys(widgets.fields.properties)
export const WIDGET_DEFAULTS: Json = { active: true, kind: 'a', note: 'none' }

const NAMES = ['alpha', 'Beta', 'gamma', 'ÄÖ', 'x*y', '50%', 'a_b', 'zeta', 'über', '日本']

/** A value for a field, or a function of the widgets that exist (a parent's id, a fresh label). */
type Choice = unknown | ((random: Random, ids: readonly number[]) => unknown)

interface FieldChoices {
  /** Whole values, which any write may send. */
  readonly whole: readonly Choice[]
  /** Only a merge patch may send these: null, and objects with members left out. */
  readonly partial?: readonly Choice[]
  readonly invalid: readonly Choice[]
}

const CHOICES: Readonly<Record<string, FieldChoices>> = {
  name: { whole: NAMES, invalid: ['', 5] },
  count: { whole: [0, 1, -5, 1000, 7], partial: [null], invalid: [-6, 1001, 2.5, '3'] },
  ratio: { whole: [0, 0.5, 1, 0.25, 1e-9], partial: [null], invalid: [1.5, -0.1, '0.5'] },
  active: { whole: [true, false], partial: [null], invalid: ['true', 0] },
  kind: { whole: ['a', 'b', 'c'], partial: [null], invalid: ['d'] },
  level: { whole: [1, 5, 10], partial: [null], invalid: [2, 5.5, '5'] },
  when: { whole: ['2026-01-01T00:00:00Z', '2026-01-01T02:00:00+02:00', '2025-12-31T23:59:59.999Z'], partial: [null], invalid: ['2026-13-01T00:00:00Z', 'yesterday', '2026-06-30T23:59:60Z'] },
  day: { whole: ['2026-01-01', '2026-12-31'], partial: [null], invalid: ['2026-02-30', '26-1-1'] },
  tags: { whole: [[], ['a'], ['a', 'b', 'c']], partial: [null], invalid: [['a', 'b', 'c', 'd'], ['toolong'], [1], 'a'] },
  meta: { whole: [{ color: 'red' }, { color: 'red', size: 3 }], partial: [{ size: 3 }, { size: null }, null], invalid: [{ color: 'blue', extra: 1 }, {}, { color: null }] },
  shape: { whole: [{ kind: 'circle', r: 1 }, { kind: 'square', side: 2 }], partial: [{ r: 2 }, { side: 3 }, null], invalid: [{ kind: 'square', r: 1 }, { kind: 'circle' }] },
  note: { whole: ['x', 'y'], partial: [null], invalid: [3] },
  label: { whole: [(random: Random) => `u${Math.floor(random.next() * 1e6)}`, 'l1', 'l2'], partial: [null], invalid: ['toolonglabel'] },
  // Mostly without a parent: a chain of parents makes each delete cascade through most of the collection.
  parentId: { whole: [(random: Random, ids: readonly number[]) => random.pick(ids.length > 0 ? ids : [1])], partial: [null], invalid: [999999, 0, -1, 'x'] }
}

const SHARE_INVALID = 0.03

function choose (random: Random, choices: readonly Choice[], ids: readonly number[]): unknown {
  const choice = random.pick(choices)
  return typeof choice === 'function' ? (choice as (random: Random, ids: readonly number[]) => unknown)(random, ids) : choice
}

/**
 * A random body: whole values for a create or replacement (`name` always),
 * or a merge patch of a few members. Now and then a value is invalid, an
 * unknown member is added, or a read-only `id` is sent.
 */
export function randomWidgetBody (random: Random, kind: 'whole' | 'patch', ids: readonly number[]): Json {
  const body: Json = {}
  for (const [field, choices] of Object.entries(CHOICES)) {
    const wanted = kind === 'whole' ? field === 'name' || random.chance(field === 'parentId' ? 0.1 : 0.5) : random.chance(0.3)
    if (!wanted) continue
    const pool = random.chance(SHARE_INVALID) ? choices.invalid : kind === 'whole' ? choices.whole : [...choices.whole, ...choices.partial ?? []]
    body[field] = choose(random, pool, ids)
  }
  if (random.chance(0.03)) body.bogus = 1
  if (random.chance(0.02)) body.id = random.pick([...ids, 1])
  return body
}

const EQUALITY = ['eq', 'ne', 'in'] as const
const ORDERED = [...EQUALITY, 'lt', 'lte', 'gt', 'gte'] as const

/** Per filterable field: the operators it takes (by its type) and values to compare with. */
export const FILTERS: Readonly<Record<string, { readonly operators: readonly FilterOperator[], readonly samples: readonly unknown[] }>> = {
  count: { operators: ORDERED, samples: [0, 1, -5, 7, 1000] },
  ratio: { operators: ORDERED, samples: [0, 0.5, 1, 0.25, 1e-9] },
  active: { operators: EQUALITY, samples: [true, false] },
  kind: { operators: EQUALITY, samples: ['a', 'b', 'c'] },
  // A set of numbers is ordered, unlike a set of strings.
  level: { operators: ORDERED, samples: [1, 5, 10] },
  when: { operators: ORDERED, samples: ['2026-01-01T00:00:00Z', '2026-01-01T01:00:00+01:00', '2025-12-31T23:59:59.999Z'] },
  day: { operators: ORDERED, samples: ['2026-01-01', '2026-12-31'] },
  name: { operators: [...ORDERED, 'like'], samples: [...NAMES, 'äö', 'ALPHA', 'a*', '*a*', '*%*', '*_*', 'x*', '*b'] },
  label: { operators: [...ORDERED, 'like'], samples: ['l1', 'l2', 'u*', 'L1'] }
}

/** Keys `sort=` may name on widgets. */
export const SORT_KEYS = ['count', 'ratio', 'active', 'kind', 'level', 'when', 'day', 'label', 'name', 'createdAt']
