import { Type } from '@sinclair/typebox'
import { defineResource } from '../src/resources/define.js'

export const notes = defineResource({
  collection: 'notes',
  description: 'A private note; each caller sees only their own.',
  fields: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    body: Type.String({ maxLength: 20000, default: '' })
  }),
  owner: 'owner',
  example: { name: 'Groceries', body: 'Milk, eggs, bread.' }
})
