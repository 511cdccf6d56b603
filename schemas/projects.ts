import { Type } from '@sinclair/typebox'
import { defineResource, hasMany, where } from '../src/resources/define.js'

export const projects = defineResource({
  collection: 'projects',
  description: 'A body of work that groups tasks.',
  fields: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Unique project name.' }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    active: Type.Boolean({ default: true, description: 'Archived projects are inactive.' }),
    budget: Type.Optional(Type.Number({ minimum: 0 })),
    tags: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20, default: [] })
  }),
  relations: {
    tasks: hasMany('tasks', { foreignKey: 'projectId', onDelete: 'cascade' })
  },
  unique: ['name'],
  filters: {
    active: [where('active', 'eq', true)],
    archived: [where('active', 'eq', false)]
  },
  sortable: ['name', 'budget'],
  filterable: ['active', 'name', 'budget'],
  example: { name: 'Road repairs', description: 'Fix the potholes on Main Street.', budget: 12000, tags: ['city'] }
})
