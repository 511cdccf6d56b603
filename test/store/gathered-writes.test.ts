/**
 * Writes that arrive together (gathered-writes.ts, write-batches.ts): on
 * PostgreSQL, while no webhook subscription is active, a turn's creates of
 * one collection are made by one statement, and its edits written by one,
 * each answered with its own record; when one of them fails, each runs
 * alone to its own answer; with a subscription active, a turn's creates and
 * edits share one transaction (shared-transactions.ts), made by the same
 * gathered statements, with one statement adding all their events. Runs on
 * SQLite too (every write in a group-committed transaction), where the
 * answers are checked and no statement gathers writes.
 */
import t, { type Test } from 'tap'
import { sql, type CompiledQuery } from 'kysely'
import { assertProblem, bearer, body, buildTestApp, createProject, ON_POSTGRES, post } from '../helper.js'
import { otherConnection, type OtherConnection } from '../support/other-connection.js'
import { recordingStore } from '../support/recording-store.js'
import { addActiveSubscription } from '../support/subscriptions.js'
import type { Dialect } from '../../src/store/dialect.js'
import { EVENTS_TABLE } from '../../src/store/webhook-tables.js'
import { buildModel } from '../../src/resources/model.js'
import { resources } from '../../schemas/index.js'

const projects = buildModel(resources).get('projects')!

/** The statement that makes many creates at once, and a create alone. */
const gathered = (sql: string): boolean => sql.startsWith('insert into') && sql.includes('unnest(')
const singles = (sql: string): boolean => sql.startsWith('insert into') && !sql.includes('unnest(')
/** The statement that writes many edits at once, and an edit alone. */
const gatheredEdits = (sql: string): boolean => sql.startsWith('update') && sql.includes('unnest(')
const singleEdits = (sql: string): boolean => sql.startsWith('update') && !sql.includes('unnest(')
/** The statement that makes many deletes at once, and a delete alone. */
const gatheredDeletes = (sql: string): boolean => sql.startsWith('delete') && sql.includes('unnest(')
const singleDeletes = (sql: string): boolean => sql.startsWith('delete') && !sql.includes('unnest(')

type App = Awaited<ReturnType<typeof buildTestApp>>

/** The app on a store that records what it sends (`sent`), and another connection to its database. */
async function recordedApp (t: Test): Promise<{ app: App, sent: CompiledQuery[], dialect: Dialect, other: OtherConnection }> {
  const { store, sent, dialect } = await recordingStore(t)
  return { app: await buildTestApp(t, { store }), sent, dialect, other: await otherConnection(t) }
}

/** Eight tasks of a new project called `name` (`name 0`…`name 7`): their creates' answers and their ids. */
async function eightTasks (app: App, name: string): Promise<{ created: Awaited<ReturnType<typeof post>>[], ids: number[] }> {
  const project = await createProject(app, { name })
  const created = await Promise.all(Array.from({ length: 8 }, async (_, i) => await post(app, '/v1/tasks', { name: `${name} ${i}`, projectId: project.id })))
  return { created, ids: created.map(answer => body(answer).id as number) }
}

/** That some of `writes` writes went in one gathered statement, and that each was made by exactly one statement, gathered or alone. */
function eachWrittenOnce (t: Test, sent: readonly CompiledQuery[], gatheredOnes: (sql: string) => boolean, singleOnes: (sql: string) => boolean, writes: number, what: string): void {
  const gatheredIds = sent.filter(query => gatheredOnes(query.sql)).map(query => query.parameters[0] as unknown[])
  t.ok(gatheredIds.some(statement => statement.length >= 2), `PostgreSQL: ${what}s went together`)
  t.equal(gatheredIds.flat().length + sent.filter(query => singleOnes(query.sql)).length, writes, `each ${what} made by one statement`)
}

t.test('creates of one turn are made by one statement, each answered with its own record', async t => {
  const { app, sent, dialect, other } = await recordedApp(t)
  const project = await createProject(app, { name: 'gathered' })
  sent.length = 0

  const names = Array.from({ length: 12 }, (_, i) => `gathered ${i}`)
  const answers = await Promise.all(names.map(async (name, i) => await post(app, '/v1/tasks', { name, projectId: project.id, priority: i % 5 + 1, assignee: `person ${i}` })))
  t.same(answers.map(answer => answer.statusCode), names.map(() => 201))
  answers.forEach((answer, i) => {
    const created = body(answer)
    t.equal(created.name, names[i], `create ${i} is answered with its own record`)
    t.equal(created.assignee, `person ${i}`)
    t.equal(created.priority, i % 5 + 1)
    t.equal(answer.headers.location, `/v1/tasks/${created.id as number}`)
  })
  const ids = answers.map(answer => body(answer).id as number)
  t.equal(new Set(ids).size, 12, 'twelve records')
  for (const [i, id] of ids.entries()) {
    t.equal(await other.count('tasks', `id = ${id} and name = '${names[i]!}' and priority = ${i % 5 + 1} and assignee = 'person ${i}' and version = 1`), 1, `record ${i} is stored as answered`)
  }
  const fetched = await app.inject({ method: 'GET', url: `/v1/tasks/${ids[7]!}` })
  t.equal(fetched.headers.etag, answers[7]!.headers.etag, 'a create\'s ETag is its record\'s')

  if (dialect.writesOneAtATime) {
    t.equal(sent.filter(query => gathered(query.sql)).length, 0, 'SQLite: every create in the writer\'s transaction')
    return
  }
  t.equal(sent.filter(query => gathered(query.sql)).length, 1, 'PostgreSQL: one statement made all twelve')
  t.equal(sent.filter(query => singles(query.sql)).length, 0, 'and none was made alone')
})

t.test('every kind of column goes through a gathered create exactly', async t => {
  const { app, sent, dialect } = await recordedApp(t)
  // Text an array literal must escape, numbers that are not whole, booleans, JSON, and fields left out.
  const sentValues = [
    { name: 'kinds "quoted" \\ {braced}, commas', description: 'ü 中文 NULL "', active: false, budget: 1234.5, tags: ['a "b" c', 'd\\e', '{f,g}', 'NULL'] },
    { name: 'kinds plain', active: true, budget: 0.1, tags: [] },
    { name: 'kinds bare' }
  ]
  sent.length = 0
  const answers = await Promise.all(sentValues.map(async values => await post(app, '/v1/projects', values)))
  t.same(answers.map(answer => answer.statusCode), [201, 201, 201])
  const expected = [sentValues[0], sentValues[1], { name: 'kinds bare', active: true, tags: [] }]
  /** A record's fields, without what the service adds. */
  const fieldsOf = (record: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(record).filter(([name]) => !['id', 'links', 'createdAt', 'updatedAt'].includes(name)))
  for (const [i, answer] of answers.entries()) {
    const created = body(answer)
    t.same(fieldsOf(created), expected[i], `create ${i} answered as sent`)
    const stored = body(await app.inject({ method: 'GET', url: `/v1/projects/${created.id as number}` }))
    t.same(stored, created, 'and stored as answered, its times too')
  }
  const owned = await Promise.all(['mine', 'mine too'].map(async name => await post(app, '/v1/notes', { name })))
  t.same(owned.map(answer => body(answer).owner), ['test-admin', 'test-admin'], 'an owned collection\'s creates carry their owner')
  if (!dialect.writesOneAtATime) t.equal(sent.filter(query => gathered(query.sql)).length, 2, 'PostgreSQL: the projects and the notes each in one statement')
})

t.test('when one create of a turn fails, each runs alone and gets its own answer', async t => {
  const { app, sent, dialect, other } = await recordedApp(t)
  const project = await createProject(app, { name: 'taken' })
  sent.length = 0

  const projects = ['one', 'taken', 'two', 'three'].map(name => ({ name }))
  const tasks = [project.id, 999999, project.id].map((projectId, i) => ({ name: `child ${i}`, projectId }))
  const [projectAnswers, taskAnswers] = await Promise.all([
    Promise.all(projects.map(async values => await post(app, '/v1/projects', values))),
    Promise.all(tasks.map(async values => await post(app, '/v1/tasks', values)))
  ])
  t.same(projectAnswers.map(answer => answer.statusCode), [201, 409, 201, 201], 'the name already taken is a 409, the others are made')
  assertProblem(t, projectAnswers[1]!, 409)
  t.same(taskAnswers.map(answer => answer.statusCode), [201, 400, 201], 'the missing parent is a 400, the others are made')
  const missing = assertProblem(t, taskAnswers[1]!, 400)
  t.same((missing.errors as Array<{ pointer: string }>).map(error => error.pointer), ['/projectId'])
  for (const name of ['one', 'taken', 'two', 'three']) t.equal(await other.count('projects', `name = '${name}'`), 1, `${name}: once`)
  for (const name of ['child 0', 'child 2']) t.equal(await other.count('tasks', `name = '${name}'`), 1, `${name}: once`)
  t.equal(await other.count('tasks', 'name = \'child 1\''), 0)

  if (dialect.writesOneAtATime) return
  t.equal(sent.filter(query => gathered(query.sql)).length, 2, 'PostgreSQL: each collection\'s creates were sent as one statement')
  t.equal(sent.filter(query => singles(query.sql)).length, 7, 'which failed, and each create then ran alone')
})

t.test('edits of one turn are written by one statement, each on the version it read and answered with its own record', async t => {
  const { app, sent, dialect, other } = await recordedApp(t)
  const { created, ids } = await eightTasks(app, 'edited')
  sent.length = 0

  const answers = await Promise.all(ids.map(async (id, i) => await app.inject({
    method: 'PATCH', url: `/v1/tasks/${id}`, headers: { 'if-match': created[i]!.headers.etag! }, payload: { priority: i % 5 + 1, assignee: `editor ${i}` }
  })))
  t.same(answers.map(answer => answer.statusCode), ids.map(() => 200))
  for (const [i, answer] of answers.entries()) {
    t.match(body(answer), { id: ids[i], name: `edited ${i}`, priority: i % 5 + 1, assignee: `editor ${i}` }, `edit ${i} is answered with its own record`)
    t.not(answer.headers.etag, created[i]!.headers.etag)
    t.equal(await other.count('tasks', `id = ${ids[i]!} and priority = ${i % 5 + 1} and assignee = 'editor ${i}' and version = 2`), 1, 'and stored so, once')
  }
  t.equal((await app.inject({ method: 'GET', url: `/v1/tasks/${ids[3]!}` })).headers.etag, answers[3]!.headers.etag, 'an edit\'s ETag is its record\'s')
  if (!dialect.writesOneAtATime) {
    // The edits read their records in the turn's batch of reads; those that read together are written together.
    eachWrittenOnce(t, sent, gatheredEdits, singleEdits, 8, 'edit')
  }

  sent.length = 0
  // Two edits of one record in one turn, and edits of others: no edit is lost, none applied twice.
  const [first, second, third] = ids as [number, number, number]
  const mixed = await Promise.all([[first, 'again'], [second, 'b'], [first, 'once more'], [third, 'c']].map(async ([id, assignee]) =>
    await app.inject({ method: 'PATCH', url: `/v1/tasks/${id as number}`, payload: { assignee } })))
  t.same(mixed.map(answer => answer.statusCode), [200, 200, 200, 200])
  t.not(mixed[0]!.headers.etag, mixed[2]!.headers.etag, 'the record edited twice: two versions')
  t.equal(await other.count('tasks', `id = ${first} and version = 4 and assignee in ('again', 'once more')`), 1, 'both edits landed, one after the other')
  t.equal(await other.count('tasks', `id in (${second}, ${third}) and version = 3`), 2)
  if (!dialect.writesOneAtATime) t.ok(sent.filter(query => gatheredEdits(query.sql)).length >= 1, 'PostgreSQL: the others still went together')
})

t.test('edits of one turn that change a counted value are counted once each, on one shard of each tally', async t => {
  const { app, sent, dialect, other } = await recordedApp(t)
  const { ids } = await eightTasks(app, 'counted')
  sent.length = 0
  const answers = await Promise.all(ids.map(async id => await app.inject({ method: 'PATCH', url: `/v1/tasks/${id}`, payload: { status: 'doing' } })))
  t.same(answers.map(answer => answer.statusCode), ids.map(() => 200))
  t.equal(Number((await app.inject({ method: 'GET', url: '/v1/tasks?status=doing' })).headers['x-total-count']), 8, 'the eight counted as doing')
  t.equal(Number((await app.inject({ method: 'GET', url: '/v1/tasks?status=todo' })).headers['x-total-count']), 0, 'and no longer as todo')
  if (dialect.writesOneAtATime) return
  t.equal(sent.filter(query => gatheredEdits(query.sql)).length, 1, 'PostgreSQL: one statement')
  // Picked per row, its eight rows locked eight shards in random order, and two such statements deadlocked.
  t.equal(await other.count('(select distinct shard from resourcery_value_counts where field = \'status\' and value = \'doing\') as shards'), 1, 'which added to one shard')
})

t.test('when one edit of a turn fails, each runs alone and gets its own answer', async t => {
  const { app, sent, dialect, other } = await recordedApp(t)
  await createProject(app, { name: 'untouched' })
  const projects = await Promise.all(['kept one', 'kept two', 'kept three'].map(async name => await createProject(app, { name })))
  sent.length = 0
  const renames = ['renamed one', 'untouched', 'renamed two']
  const answers = await Promise.all(projects.map(async (project, i) => await app.inject({ method: 'PATCH', url: `/v1/projects/${project.id as number}`, payload: { name: renames[i] } })))
  t.same(answers.map(answer => answer.statusCode), [200, 409, 200], 'the name another project has is a 409, the others are written')
  for (const name of ['renamed one', 'kept two', 'renamed two', 'untouched']) t.equal(await other.count('projects', `name = '${name}'`), 1, `${name}: once`)
  t.equal(await other.count('projects', 'name in (\'kept one\', \'kept three\')'), 0)
  if (dialect.writesOneAtATime) return
  t.equal(sent.filter(query => gatheredEdits(query.sql)).length, 1, 'PostgreSQL: the three were sent as one statement')
  t.equal(sent.filter(query => singleEdits(query.sql)).length, 3, 'which failed, and each edit then ran alone')
})

t.test('deletes of one turn are made by one statement, each on the version it read, each answered', async t => {
  const { app, sent, dialect, other } = await recordedApp(t)
  const { created, ids } = await eightTasks(app, 'deleted')
  const kept = body(await post(app, '/v1/tasks', { name: 'kept', projectId: body(created[0]!).projectId })).id as number
  // One of them changed since its client read it: its If-Match no longer holds.
  t.equal((await app.inject({ method: 'PATCH', url: `/v1/tasks/${ids[5]!}`, payload: { priority: 5 } })).statusCode, 200)
  sent.length = 0

  const answers = await Promise.all(ids.map(async (id, i) => await app.inject({ method: 'DELETE', url: `/v1/tasks/${id}`, headers: { 'if-match': created[i]!.headers.etag! } })))
  t.same(answers.map(answer => answer.statusCode), [204, 204, 204, 204, 204, 412, 204, 204], 'each delete answered; the stale If-Match a 412')
  t.equal(await other.count('tasks', `id in (${ids.join(', ')})`), 1, 'seven records gone')
  t.equal(await other.count('tasks', `id in (${ids[5]!}, ${kept})`), 2, 'the one changed since, and the one not asked for, kept')
  const gone = await app.inject({ method: 'GET', url: `/v1/tasks/${ids[0]!}` })
  t.equal(gone.statusCode, 404, 'a deleted record is not found')
  if (!dialect.writesOneAtATime) {
    eachWrittenOnce(t, sent, gatheredDeletes, singleDeletes, 7, 'delete')
  }

  // Two deletes of one record in one turn, beside another: one deletes it, the other finds it gone.
  sent.length = 0
  const [first, second] = [ids[6]!, ids[5]!]
  const twice = await Promise.all([first, second, first].map(async id => await app.inject({ method: 'DELETE', url: `/v1/tasks/${id}` })))
  t.same(twice.map(answer => answer.statusCode).sort(), [204, 404, 404], 'the record deleted already is a 404 to both; the other is deleted')
  t.equal(await other.count('tasks', `id in (${first}, ${second})`), 0)

  const again = await Promise.all([kept, kept].map(async id => await app.inject({ method: 'DELETE', url: `/v1/tasks/${id}` })))
  t.same(again.map(answer => answer.statusCode).sort(), [204, 404], 'asked twice in one turn: deleted once, then not found')
  t.equal(await other.count('tasks', `id = ${kept}`), 0)
})

t.test('deletes of one turn take the records their relations cascade to with them', async t => {
  const { app, sent, dialect, other } = await recordedApp(t)
  const projects = await Promise.all(['cascade one', 'cascade two', 'cascade kept'].map(async name => await createProject(app, { name })))
  for (const project of projects) for (const i of [1, 2]) await post(app, '/v1/tasks', { name: `${project.name as string} task ${i}`, projectId: project.id })
  sent.length = 0
  const deleted = await Promise.all(projects.slice(0, 2).map(async project => await app.inject({ method: 'DELETE', url: `/v1/projects/${project.id as number}` })))
  t.same(deleted.map(answer => answer.statusCode), [204, 204])
  t.equal(await other.count('tasks', 'name like \'cascade one task %\' or name like \'cascade two task %\''), 0, 'their tasks went with them')
  t.equal(await other.count('tasks', 'name like \'cascade kept task %\''), 2, 'the other project\'s stayed')
  if (!dialect.writesOneAtATime) t.equal(sent.filter(query => gatheredDeletes(query.sql)).length, 1, 'PostgreSQL: in one statement')
})

/**
 * The transactions that last wrote the rows of `table` matching `condition`:
 * PostgreSQL's xmin, the writing transaction's id. (Not of the outbox, whose
 * rows the dispatcher marks as it fans them out.)
 */
async function writers (other: OtherConnection, table: string, condition: string): Promise<number> {
  return await other.count(`(select distinct xmin::text from ${table} where ${condition}) as writers`)
}

t.test('with a subscription active, creates, edits and deletes of one turn each get their event', async t => {
  const app = await buildTestApp(t)
  const other = await otherConnection(t)
  const project = await createProject(app, { name: 'heard' })
  const before = await Promise.all(Array.from({ length: 4 }, async (_, i) => await post(app, '/v1/tasks', { name: `edit heard ${i}`, projectId: project.id })))
  await addActiveSubscription(other)

  const created = await Promise.all(Array.from({ length: 6 }, async (_, i) => await post(app, '/v1/tasks', { name: `heard ${i}`, projectId: project.id })))
  t.same(created.map(answer => answer.statusCode), Array(6).fill(201))
  t.equal(await other.count(EVENTS_TABLE, 'type = \'tasks.created\''), 6, 'six events')
  t.equal(await other.count('tasks', 'name like \'heard %\''), 6, 'six records, none made twice')
  for (const answer of created) {
    const { id, name } = body(answer)
    t.equal(await other.count(EVENTS_TABLE, `type = 'tasks.created' and record like '{"id":${id as number},%' and record like '%"name":"${name as string}"%'`), 1, `${name as string}: its own event`)
  }

  const edited = await Promise.all(before.map(async answer => await app.inject({ method: 'PATCH', url: answer.headers.location!, payload: { status: 'done' } })))
  t.same(edited.map(answer => answer.statusCode), Array(4).fill(200))
  t.equal(await other.count(EVENTS_TABLE, 'type = \'tasks.updated\''), 4, 'four events')
  t.equal(await other.count('tasks', 'name like \'edit heard %\' and status = \'done\' and version = 2'), 4, 'four records, each edited once')
  t.equal(await other.count(EVENTS_TABLE, 'type = \'tasks.updated\' and record like \'%"version":2,%\' and record like \'%"status":"done"%\''), 4, 'each event holds the record as edited')

  if (ON_POSTGRES) {
    t.equal(await writers(other, 'tasks', 'name like \'heard %\''), 1, 'PostgreSQL: the six creates in one transaction')
    t.equal(await writers(other, 'tasks', 'name like \'edit heard %\''), 1, 'the four edits in one transaction too')
  }

  const deleted = await Promise.all(before.map(async answer => await app.inject({ method: 'DELETE', url: answer.headers.location! })))
  t.same(deleted.map(answer => answer.statusCode), Array(4).fill(204))
  t.equal(await other.count(EVENTS_TABLE, 'type = \'tasks.deleted\''), 4, 'four events')
  t.equal(await other.count('tasks', 'name like \'edit heard %\''), 0, 'four records gone')
})

t.test('with a subscription active, a failed write leaves no trace of the others\' shared transaction', async t => {
  const app = await buildTestApp(t)
  const other = await otherConnection(t)
  const project = await createProject(app, { name: 'shared' })
  await addActiveSubscription(other)

  // A missing parent among a turn's creates: its 400, and the others made once each, each with its one event.
  const parents = [project.id, 999999, project.id, project.id]
  const created = await Promise.all(parents.map(async (projectId, i) => await post(app, '/v1/tasks', { name: `shared ${i}`, projectId })))
  t.same(created.map(answer => answer.statusCode), [201, 400, 201, 201])
  t.equal(await other.count('tasks', 'name like \'shared %\''), 3, 'three records, none made twice')
  t.equal(await other.count('tasks', 'name = \'shared 1\''), 0)
  t.equal(await other.count(EVENTS_TABLE, 'type = \'tasks.created\''), 3, 'three events, none for the refused create')
  for (const i of [0, 2, 3]) t.equal(await other.count(EVENTS_TABLE, `record like '%"name":"shared ${i}"%'`), 1, `shared ${i}: one event`)

  // A stale If-Match among a turn's edits: its 412, nothing of it stored or announced, the others' edits and events once each.
  const stale = created[2]!.headers.etag!
  t.equal((await app.inject({ method: 'PATCH', url: created[2]!.headers.location!, payload: { priority: 4 } })).statusCode, 200)
  const edits = await Promise.all([0, 2, 3].map(async i => await app.inject({
    method: 'PATCH', url: created[i]!.headers.location!, headers: { 'if-match': i === 2 ? stale : created[i]!.headers.etag! }, payload: { assignee: 'editor' }
  })))
  t.same(edits.map(answer => answer.statusCode), [200, 412, 200])
  t.equal(await other.count('tasks', 'name like \'shared %\' and assignee = \'editor\' and version = 2'), 2, 'two records edited once each')
  t.equal(await other.count('tasks', 'name = \'shared 2\' and assignee is null and version = 2'), 1, 'the stale edit not stored')
  t.equal(await other.count(EVENTS_TABLE, 'type = \'tasks.updated\' and record like \'%"assignee":"editor"%\''), 2, 'two events of the edits')

  // And a stale If-Match among a turn's deletes: its 412, the record kept, the others deleted with one event each.
  const deletes = await Promise.all([0, 2, 3].map(async i => await app.inject({
    method: 'DELETE', url: created[i]!.headers.location!, headers: { 'if-match': i === 2 ? stale : edits[i === 0 ? 0 : 2]!.headers.etag! }
  })))
  t.same(deletes.map(answer => answer.statusCode), [204, 412, 204])
  t.same([await other.count('tasks', 'name like \'shared %\''), await other.count('tasks', 'name = \'shared 2\'')], [1, 1], 'only the record whose delete was refused is left')
  t.equal(await other.count(EVENTS_TABLE, 'type = \'tasks.deleted\''), 2, 'two events of the deletes')
})

t.test('with a subscription active, an owner\'s writes narrowed to their own records share the turn\'s transaction too', async t => {
  const app = await buildTestApp(t)
  const other = await otherConnection(t)
  const alice = { authorization: bearer({ sub: 'alice', scope: 'notes:read notes:write' }) }
  const bob = { authorization: bearer({ sub: 'bob', scope: 'notes:read notes:write' }) }
  const notes = await Promise.all(['a', 'b', 'c'].map(async name => await post(app, '/v1/notes', { name: `alice ${name}` }, alice)))
  await addActiveSubscription(other)

  // Alice's edits, narrowed to her records (not gathered, each its own statement in the shared transaction), beside
  // Bob's try at one of hers and creates of both.
  const answers = await Promise.all([
    ...notes.map(async (note, i) => await app.inject({ method: 'PATCH', url: note.headers.location!, headers: alice, payload: { name: `alice ${i} edited` } })),
    app.inject({ method: 'PATCH', url: notes[0]!.headers.location!, headers: bob, payload: { name: 'bob was here' } }),
    post(app, '/v1/notes', { name: 'alice d' }, alice),
    post(app, '/v1/notes', { name: 'bob a' }, bob)
  ])
  t.same(answers.map(answer => answer.statusCode), [200, 200, 200, 404, 201, 201], 'each answered as if alone: Bob cannot see Alice\'s note')
  t.equal(await other.count('notes', 'name like \'alice % edited\' and owner = \'alice\' and version = 2'), 3, 'Alice\'s three edits stored once each')
  t.equal(await other.count('notes', 'name = \'bob was here\''), 0)
  t.equal(await other.count(EVENTS_TABLE, 'type = \'notes.updated\''), 3, 'three events of the edits')
  t.equal(await other.count(EVENTS_TABLE, 'type = \'notes.created\''), 2, 'two of the creates')
})

/** A statement on the idempotency records that gathers many keys: their claims, or their stored refusals. */
const gatheredKeys = (what: 'claims' | 'refusals', query: CompiledQuery): boolean => query.sql.includes('unnest(') &&
  query.sql.includes(what === 'claims' ? 'insert into "resourcery_idempotency"' : 'update "resourcery_idempotency"')
/** How many keys each gathered statement of `what` was for. */
const keysPerStatement = (what: Parameters<typeof gatheredKeys>[0], sent: readonly CompiledQuery[]): number[] =>
  sent.filter(query => gatheredKeys(what, query)).map(query => (query.parameters[0] as unknown[]).length)

t.test('creates under Idempotency-Keys arriving together each mark their own key, with or without a subscription', async t => {
  const { app, other, sent, dialect } = await recordedApp(t)
  const project = await createProject(app, { name: 'keyed' })
  for (const round of ['plain', 'subscribed']) {
    if (round === 'subscribed') await addActiveSubscription(other)
    const keys = [0, 1, 2, 3].map(i => `${round}-${i}`)
    sent.length = 0
    // Two more under keys of their own create in a project that does not exist: refused, they create nothing.
    const clashing = [0, 1].map(i => `${round}-refused-${i}`)
    const clash = async (key: string) => await post(app, `/v1/projects/${(project.id as number) + 1000}/tasks`, { name: 'orphan' }, { 'idempotency-key': key })
    const [created, refused] = await Promise.all([
      Promise.all([
        ...keys.map(async (key, i) => await post(app, '/v1/tasks', { name: `${round} keyed ${i}`, projectId: project.id }, { 'idempotency-key': key })),
        post(app, '/v1/tasks', { name: `${round} unkeyed`, projectId: project.id })
      ]),
      Promise.all(clashing.map(clash))
    ])
    t.same(created.map(answer => answer.statusCode), [201, 201, 201, 201, 201], `${round}: all made`)
    t.same(refused.map(answer => answer.statusCode), [404, 404])
    if (!dialect.writesOneAtATime) {
      t.same(keysPerStatement('claims', sent), [6], 'PostgreSQL: the six keys claimed by one statement')
      t.match(sent.find(query => gatheredKeys('claims', query))?.sql, /set_config\('synchronous_commit', 'off', true\)/, 'which commits without waiting for its flush: the creates\' flush takes it')
      // A create's record is its answer (marked in its transaction); only the refusals' answers are stored after them.
      t.same(keysPerStatement('refusals', sent), [2], 'and the two refusals stored by one')
    }
    for (const key of clashing) {
      const replay = await clash(key)
      t.same([replay.statusCode, replay.headers['idempotent-replayed']], [404, 'true'], `${key} replays its refusal`)
    }
    for (const [i, key] of keys.entries()) {
      const { id } = body(created[i]!)
      t.equal(await other.count('resourcery_idempotency', `key = '${key}' and committed like '{"id":${id as number},%'`), 1, `${key} is marked with its own record`)
      const replay = await post(app, '/v1/tasks', { name: `${round} keyed ${i}`, projectId: project.id }, { 'idempotency-key': key })
      t.same([replay.statusCode, replay.headers['idempotent-replayed'], body(replay).id], [201, 'true', id], `${key} replays it`)
    }
    t.equal(await other.count('tasks', `name like '${round} %'`), 5, `${round}: each made once`)
  }
  t.equal(await other.count(EVENTS_TABLE, 'type = \'tasks.created\''), 5, 'the subscribed round\'s five events')
  if (!dialect.writesOneAtATime) {
    // The claims' setting was their own transactions': every connection of the pool still waits for the flush of what it commits.
    const settings = await Promise.all([1, 2, 3, 4].map(async () => (await sql<{ setting: string }>`select current_setting('synchronous_commit') as setting, pg_sleep(0.05)`.execute(dialect.db)).rows[0]?.setting))
    t.same(settings, ['on', 'on', 'on', 'on'], 'PostgreSQL: synchronous_commit is on again on the pool\'s connections')
  }
})

t.test('of keyed creates sharing a transaction, one whose key a retry took over creates nothing, and the others commit, each marked', async t => {
  const { app, other } = await recordedApp(t)
  const minutes = (n: number): Date => new Date(Date.now() + n * 60_000)
  const claim = async (key: string, now: Date) => await app.store.idempotency.claim('marker', key, 'fingerprint', { now, expiresAt: minutes(60), staleBefore: new Date(now.getTime() - 5 * 60_000) })
  const held = []
  for (const [key, now] of [['kept-1', minutes(0)], ['lost', minutes(-10)], ['kept-2', minutes(0)]] as const) {
    const made = await claim(key, now)
    if (!made.claimed) throw new Error(`${key} was already claimed`)
    held.push(made.held)
  }
  // A retry of the slow one, past the stale limit, takes its key over.
  t.equal((await claim('lost', minutes(0))).claimed, true, 'the retry holds the key now')
  const outcomes = await Promise.allSettled(held.map(async (key, i) =>
    await app.store.insert(projects, { name: `marked ${i}`, active: true, tags: [], description: undefined, budget: undefined }, { idempotency: key })))
  t.same(outcomes.map(outcome => outcome.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.match((outcomes[1] as PromiseRejectedResult).reason, { code: 'RSY_ERR_IDEMPOTENCY_IN_PROGRESS' }, 'the one that lost its key is refused')
  t.equal(await other.count('projects', 'name like \'marked %\''), 2, 'it created nothing; the others did')
  for (const [i, key] of [[0, 'kept-1'], [2, 'kept-2']] as const) {
    const { id } = (outcomes[i] as PromiseFulfilledResult<{ id: number }>).value
    t.equal(await other.count('resourcery_idempotency', `key = '${key}' and committed like '{"id":${id},%'`), 1, `${key} is marked with its own record`)
  }
  t.equal(await other.count('resourcery_idempotency', 'key = \'lost\' and committed is null'), 1, 'the retry\'s claim is left unmarked')
})
