import { Type } from '@sinclair/typebox'
import { defineResource } from '../src/resources/define.js'

/**
 * Kept for the clients that still use it, and deprecated: every answer of
 * its routes carries `Deprecation` and `Sunset`, and OpenAPI marks its
 * operations, so clients learn in good time that it will go.
 */
export const labels = defineResource({
  collection: 'labels',
  description: 'A coloured label. **Deprecated**: label projects with their `tags` instead; this collection goes after its sunset date (2027-06-30).',
  fields: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 50, description: 'Unique label name.' }),
    color: Type.Optional(Type.String({ pattern: '^#[0-9a-f]{6}$', description: 'A hex colour in lower case, like `#d62728`.' }))
  }),
  unique: ['name'],
  sortable: ['name'],
  filterable: ['name'],
  deprecated: { since: '2026-09-01T00:00:00Z', sunset: '2027-06-30T00:00:00Z' },
  example: { name: 'urgent', color: '#d62728' }
})
