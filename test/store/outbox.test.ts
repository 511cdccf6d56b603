/**
 * The outbox under group commit: writes that share one SQLite transaction
 * each get their event while a subscription is active, and without one only
 * the first write of the transaction asks (SQLite only: PostgreSQL gives each
 * write a transaction of its own, which the webhook tests cover).
 */
import type { CompiledQuery, Kysely } from 'kysely'
import t from 'tap'
import { resources } from '../../schemas/index.js'
import { buildModel } from '../../src/resources/model.js'
import type { Database } from '../../src/store/dialect.js'
import { eventWrites } from '../../src/store/event-writes.js'
import { groupCommitWriter, type Writer } from '../../src/store/group-commit.js'
import { queryTemplates } from '../../src/store/query-templates.js'
import { createSqlStore } from '../../src/store/sql-store.js'
import { openSqlite } from '../../src/store/sqlite.js'
import { EVENTS_TABLE, WEBHOOKS_TABLE } from '../../src/store/webhook-tables.js'
import { SQLITE_ONLY, testDatabaseFile } from '../helper.js'

t.test('writes committed together: every event while a subscription is active, one question without', { skip: SQLITE_ONLY }, async t => {
  const dialect = openSqlite({ file: testDatabaseFile(t), synchronous: 'NORMAL' })
  const model = buildModel(resources)
  const store = createSqlStore(dialect, model, { apiKeyCacheMs: 0 })
  t.teardown(async () => { await store.close() })
  await store.migrate()
  const db = dialect.writer.db

  // A group-commit writer on the store's writing connection whose transactions count the outbox inserts they send.
  let outboxInserts = 0
  const counted = new WeakMap<object, Kysely<Database>>()
  const countingOf = (trx: Kysely<Database>): Kysely<Database> => {
    let proxy = counted.get(trx)
    if (proxy === undefined) {
      proxy = new Proxy(trx, {
        get (target, property) {
          if (property === 'executeQuery') {
            return async (query: CompiledQuery) => {
              if (query.sql.includes(`insert into "${EVENTS_TABLE}"`)) outboxInserts++
              return await target.executeQuery(query)
            }
          }
          const value = Reflect.get(target, property) as unknown
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
        }
      })
      counted.set(trx, proxy)
    }
    return proxy
  }
  const grouped = groupCommitWriter(db)
  const writer: Writer = { db, run: async job => await grouped.run(async trx => await job(countingOf(trx))) }
  const writes = eventWrites(writer, queryTemplates())
  const projects = model.get('projects')
  const events = async (): Promise<number> => Number((await db.selectFrom(EVENTS_TABLE).select(eb => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  // Ten writes in one turn of the event loop: one group, one transaction.
  const together = async (label: string): Promise<void> => {
    await Promise.all(Array.from({ length: 10 }, async (_, i) => await writes.run({ read: async () => undefined, write: async (_w, outbox) => { await outbox.add(projects, 'created', { id: i, name: `${label} ${i}` }) } })))
  }

  await together('before')
  t.equal(outboxInserts, 1, 'no subscription: the first write asks, the nine after it in the transaction do not')
  t.equal(await events(), 0, 'and no event is kept')

  await db.insertInto(WEBHOOKS_TABLE).values({ url: 'https://hooks.example.com/in', events: '["*"]', secret: 'whsec_x', createdAt: new Date().toISOString() }).execute()
  outboxInserts = 0
  await together('after')
  t.equal(outboxInserts, 10, 'with one: every write of the transaction adds its event')
  t.equal(await events(), 10, 'ten events kept, none lost')
})
