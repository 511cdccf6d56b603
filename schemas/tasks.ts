import { Type } from '@sinclair/typebox'
import { belongsTo, defineResource, where } from '../src/resources/define.js'

export const tasks = defineResource({
  collection: 'tasks',
  description: 'A unit of work inside a project.',
  fields: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    projectId: Type.Integer({ minimum: 1, description: 'The project this task belongs to.' }),
    status: Type.Union([Type.Literal('todo'), Type.Literal('doing'), Type.Literal('done')], { default: 'todo' }),
    priority: Type.Integer({ minimum: 1, maximum: 5, default: 3, description: '1 is the most urgent.' }),
    dueDate: Type.Optional(Type.String({ format: 'date' })),
    assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 200 }))
  }),
  relations: {
    project: belongsTo('projects', { foreignKey: 'projectId' })
  },
  filters: {
    active: [where('status', 'ne', 'done')],
    overdue: ({ today }) => [where('dueDate', 'lt', today), where('status', 'ne', 'done')]
  },
  sortable: ['priority', 'dueDate', 'status'],
  filterable: ['status', 'priority', 'assignee', 'projectId', 'dueDate'],
  example: { name: 'Fill the pothole at 5th Avenue', projectId: 1, status: 'todo', priority: 2, dueDate: '2026-12-01' }
})
