import { Type } from '@sinclair/typebox'
import t from 'tap'
import { belongsTo, defineResource, DefinitionError, hasMany } from '../../src/resources/define.js'
import { buildModel } from '../../src/resources/model.js'

const named = { name: Type.String() }

t.test('a definition is checked on its own', async t => {
  t.throws(() => defineResource({ collection: 'Bad Name', fields: Type.Object(named) }), DefinitionError)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ name: Type.Integer() }) }), /"name" as a string/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, id: Type.Integer() }) }), /reserved/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), sortable: ['nope' as 'name'] }), /sortable names "nope"/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), owner: 'name' }), /read-only/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), relations: { x: belongsTo('others', { foreignKey: 'otherId' }) } }), /not a field/)
  const ok = defineResource({ collection: 'boxes', fields: Type.Object(named) })
  t.equal(ok.singular, 'boxe', 'default singular strips one s; set singular when English disagrees')
  t.ok(Object.isFrozen(ok))
})

t.test('relations are checked against the other definitions', async t => {
  const parent = defineResource({ collection: 'parents', fields: Type.Object(named), relations: { kids: hasMany('kids', { foreignKey: 'parentId' }) } })
  t.throws(() => buildModel([parent]), /unknown collection "kids"/)
  const kidWithoutKey = defineResource({ collection: 'kids', fields: Type.Object({ ...named, parentId: Type.Integer() }) })
  t.throws(() => buildModel([parent, kidWithoutKey]), /needs kids to declare belongsTo/)
  const kid = defineResource({ collection: 'kids', fields: Type.Object({ ...named, parentId: Type.String() }), relations: { parent: belongsTo('parents', { foreignKey: 'parentId' }) } })
  t.throws(() => buildModel([parent, kid]), /integer field "parentId"/)
  t.throws(() => buildModel([parent, parent]), /defined twice/)
})
