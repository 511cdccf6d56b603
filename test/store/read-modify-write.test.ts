/**
 * The store's read-then-write on SQLite: the read runs inside the write
 * transaction, so no write can slip in between and nothing is ever retried.
 * (Through HTTP, test/http/concurrency.test.ts shows the same on both databases.)
 */
import { Type } from '@sinclair/typebox'
import t, { type Test } from 'tap'
import { defineResource } from '../../src/resources/define.js'
import { buildModel, type Resource } from '../../src/resources/model.js'
import { openStore } from '../../src/store/open.js'
import type { Store } from '../../src/store/store.js'
import { testDatabaseFile } from '../helper.js'

const counters = defineResource({ collection: 'counters', fields: Type.Object({ name: Type.String(), hits: Type.Integer({ default: 0 }) }) })

/** A store on a fresh SQLite file holding one counter at 0. */
async function storeWithCounter (t: Test): Promise<{ store: Store, resource: Resource, id: number }> {
  const model = buildModel([counters])
  const store = await openStore(model, { databaseUrl: `sqlite:${testDatabaseFile(t)}`, sqliteSynchronous: 'NORMAL' })
  t.teardown(async () => { await store.close() })
  await store.migrate()
  const resource = model.get('counters')
  const { id } = await store.insert(resource, { name: 'page', hits: 0 })
  return { store, resource, id }
}

t.test('concurrent increments each see the previous one: every edit runs once and none is lost', async t => {
  const { store, resource, id } = await storeWithCounter(t)

  let edits = 0
  const writers = 200
  const outcomes = await Promise.all(Array.from({ length: writers }, async () => await store.update(resource, id, current => {
    edits++
    return { name: current.values.name, hits: (current.values.hits as number) + 1 }
  })))
  t.equal(edits, writers, 'no edit was repeated after a lost race')
  t.notOk(outcomes.some(outcome => typeof outcome === 'string'), 'no write missed or raced')
  const stored = await store.get(resource, id)
  t.equal(stored?.values.hits, writers, 'every increment counted: each write read the one before it')
  t.equal(stored?.version, writers + 1)
})

t.test('an edit that throws refuses only its own write; a check that throws keeps the record', async t => {
  const { store, resource, id } = await storeWithCounter(t)

  const refused = new Error('refused')
  const results = await Promise.allSettled([
    store.update(resource, id, current => ({ name: current.values.name, hits: 1 })),
    store.update(resource, id, () => { throw refused }),
    store.remove(resource, id, () => { throw refused }),
    store.update(resource, id, current => ({ name: current.values.name, hits: (current.values.hits as number) + 1 }))
  ])
  t.same(results.map(result => result.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled'])
  t.equal((results[1] as PromiseRejectedResult).reason, refused)
  t.equal((await store.get(resource, id))?.values.hits, 2)
  t.equal(await store.remove(resource, 999, () => {}), 'missing')
  t.equal(await store.update(resource, 999, () => ({})), 'missing')
  t.equal(await store.remove(resource, id, () => {}), 'removed')
})
