/**
 * A page filtered on one column and sorted on another reads the sort's index
 * in order when many rows match, instead of reading every match through the
 * filter's index and sorting them, and the filter's index when few do:
 * SQLite's planner takes the filter's index whatever the numbers, so the store
 * counts the matches up to the point where the sort's index is the cheaper
 * (index-choice.ts), from the tallies where they answer, else by reading that
 * many. Either way the page is the same. SQLite only: the PostgreSQL run does
 * not include this file, as PostgreSQL's planner weighs its own statistics.
 */
import { CompiledQuery } from 'kysely'
import t from 'tap'
import type { Condition } from '../../src/resources/define.js'
import type { StoredRecord } from '../../src/store/store.js'
import { recordingStore } from '../support/recording-store.js'

const TASKS = 300
/** Three tasks are `doing`; the rest `todo`. */
const DOING = new Set([50, 150, 250])

t.test('filtered on one column and sorted on another, a page reads the cheaper index', async t => {
  const { store, dialect, sent, model } = await recordingStore(t)
  const projects = model.get('projects')!
  const tasks = model.get('tasks')!
  const project = await store.insert(projects, { name: 'p', active: true, tags: [], description: undefined, budget: undefined })
  const all: StoredRecord[] = []
  for (let i = 1; i <= TASKS; i++) {
    all.push(await store.insert(tasks, { name: `t${i}`, projectId: project.id, status: DOING.has(i) ? 'doing' : 'todo', priority: 1 + (i * 7) % 5, dueDate: undefined, assignee: DOING.has(i) ? 'bob' : undefined }))
  }
  const byPriorityDesc = (a: StoredRecord, b: StoredRecord): number => (b.values.priority as number) - (a.values.priority as number) || b.id - a.id

  /** The page, the SQL it sent and SQLite's plan of it. */
  async function page (where: Condition[], sort: 'priority' | 'id' | 'name', offset = 0, after?: unknown[]): Promise<{ ids: number[], sql: string, plan: string }> {
    sent.length = 0
    const orderBy = sort === 'id'
      ? [{ field: 'id', direction: 'desc' as const }]
      : sort === 'name' ? [{ field: 'name', direction: 'asc' as const }, { field: 'id', direction: 'asc' as const }] : [{ field: 'priority', direction: 'desc' as const }, { field: 'id', direction: 'desc' as const }]
    const rows = await store.list(tasks, { where, orderBy, limit: 20, offset, ...(after === undefined ? {} : { after }) })
    const query = sent.find(sentQuery => /^select "id", .* from "tasks"/.test(sentQuery.sql))!
    const { rows: steps } = await dialect.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]))
    return { ids: rows.map(row => row.id), sql: query.sql, plan: steps.map(step => step.detail).join('; ') }
  }
  const expected = (status: string, offset = 0): number[] => all.filter(task => task.values.status === status).sort(byPriorityDesc).slice(offset, offset + 20).map(task => task.id)

  for (const where of [[{ field: 'status', op: 'eq', value: 'todo' }], [{ field: 'status', op: 'in', value: ['todo'] }]] as Condition[][]) {
    const label = `status ${where[0]!.op} todo (297 of 300), sort=-priority`
    const many = await page(where, 'priority')
    t.same(many.ids, expected('todo'), `${label}: the page`)
    t.match(many.sql, /\+"status"/, `${label}: the status index is left out (${many.sql})`)
    t.match(many.plan, /^SCAN tasks USING INDEX tasks_priority_id_idx$/, `${label}: read in order off the priority index, no sort (${many.plan})`)
  }

  const few = await page([{ field: 'status', op: 'eq', value: 'doing' }], 'priority')
  t.same(few.ids, expected('doing'), 'status=doing (3 of 300), sort=-priority: the page')
  t.notMatch(few.sql, /\+"status"/, 'status=doing: the status index is used')
  t.match(few.plan, /tasks_status_id_idx/, `status=doing: through the status index (${few.plan})`)

  // Deep enough that reading the priority index up to the page would cost more than sorting the matches.
  const deep = await page([{ field: 'status', op: 'eq', value: 'todo' }], 'priority', 280)
  t.same(deep.ids, expected('todo', 280), 'status=todo, sort=-priority, offset 280: the page')
  t.notMatch(deep.sql, /\+"status"/, 'offset 280: the status index is used (297², the matches squared, is less than (280 + 20) × 300)')

  // After a cursor's position (priority 3, id 150): the first of the ranges beyond it is read off the priority index too.
  const cursor = await page([{ field: 'status', op: 'eq', value: 'todo' }], 'priority', 0, [3, 150])
  const beyond = (task: StoredRecord): boolean => (task.values.priority as number) < 3 || (task.values.priority === 3 && task.id < 150)
  t.same(cursor.ids, all.filter(task => task.values.status === 'todo' && beyond(task)).sort(byPriorityDesc).slice(0, 20).map(task => task.id), 'status=todo, sort=-priority, after (3, 150): the page')
  t.match(cursor.sql, /\+"status"/, 'after a position: the status index is left out')
  t.match(cursor.plan, /^SEARCH tasks USING INDEX tasks_priority_id_idx/, `after a position: entered on the priority index, no sort (${cursor.plan})`)

  const byId = await page([{ field: 'status', op: 'eq', value: 'todo' }], 'id')
  t.same(byId.ids, all.filter(task => task.values.status === 'todo').map(task => task.id).reverse().slice(0, 20), 'status=todo, sort=-id: the page')
  t.notMatch(byId.sql, /\+"status"/, 'sort=-id: the (status, id) index gives the order itself')
  t.match(byId.plan, /tasks_status_id_idx/, `sort=-id: through the status index (${byId.plan})`)
  // Columns without a tally: the store reads at most as many matches as would make the sort's index the cheaper.
  // SQLite compares text byte by byte; these names are ASCII.
  const byName = (a: StoredRecord, b: StoredRecord): number => String(a.values.name) < String(b.values.name) ? -1 : String(a.values.name) > String(b.values.name) ? 1 : a.id - b.id
  const priorities = await page([{ field: 'priority', op: 'in', value: [3, 4] }], 'name')
  t.same(priorities.ids, all.filter(task => task.values.priority === 3 || task.values.priority === 4).sort(byName).slice(0, 20).map(task => task.id), 'priority in 3,4 (120 of 300), sort=name: the page')
  t.match(priorities.sql, /\+"priority" in/, 'priority in 3,4: the priority index is left out')
  t.match(priorities.plan, /^SCAN tasks USING INDEX tasks_name_id_idx$/, `priority in 3,4: read in order off the name index, no sort (${priorities.plan})`)

  const bob = await page([{ field: 'assignee', op: 'eq', value: 'bob' }], 'priority')
  t.same(bob.ids, all.filter(task => task.values.assignee === 'bob').sort(byPriorityDesc).map(task => task.id), 'assignee=bob (3 of 300), sort=-priority: the page')
  t.notMatch(bob.sql, /\+"assignee"/, 'assignee=bob: the assignee index is used')
  t.match(bob.plan, /tasks_assignee_idx/, `assignee=bob: through the assignee index (${bob.plan})`)

  const both = await page([{ field: 'projectId', op: 'eq', value: project.id }, { field: 'status', op: 'eq', value: 'todo' }], 'priority')
  t.same(both.ids, expected('todo'), 'projectId and status=todo (297 of 300), sort=-priority: the page')
  t.match(both.sql, /\+"projectId" = \? and \+"status" = \?/, 'projectId and status: both indexes are left out')
  t.match(both.plan, /^SCAN tasks USING INDEX tasks_priority_id_idx$/, `projectId and status: read in order off the priority index (${both.plan})`)
})
