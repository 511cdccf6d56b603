/**
 * create-batches.ts: a turn's creates of one group go to `insertMany`
 * together, each answered with its row; alone in its turn, a create runs
 * alone; a statement the server refused sends each create alone, and one
 * whose outcome is unknown fails them all without making any again.
 */
import t from 'tap'
import { createBatches } from '../../src/store/create-batches.js'

const REFUSED = new Error('refused by the server')

/** A batcher whose statements are recorded and answered by `answer`; `alone` answers `alone <values>`. */
function recorded (answer: (rows: ReadonlyArray<readonly unknown[]>) => Promise<readonly string[]>) {
  const statements: unknown[][][] = []
  const aloneRuns: unknown[] = []
  const batches = createBatches<string, string>({
    insertMany: async (_group, rows) => { statements.push(rows.map(row => [...row])); return await answer(rows) },
    undone: error => error === REFUSED
  })
  const create = async (group: string, value: string): Promise<string | undefined> =>
    await batches.create(group, [value], async () => { aloneRuns.push(value); return `alone ${value}` })
  return { statements, aloneRuns, create }
}

t.test('the creates of one turn: one statement per group, each its own row', async t => {
  const { statements, aloneRuns, create } = recorded(async rows => rows.map(([value]) => `row ${String(value)}`))
  const answers = await Promise.all([create('tasks', 'a'), create('projects', 'x'), create('tasks', 'b'), create('tasks', 'c')])
  t.same(answers, ['row a', 'alone x', 'row b', 'row c'])
  t.same(statements, [[['a'], ['b'], ['c']]], 'the tasks in one statement, in order')
  t.same(aloneRuns, ['x'], 'the project, alone in its turn, ran alone')
  t.same(await create('tasks', 'd'), 'alone d', 'a later turn gathers its own')
})

t.test('a statement that created nothing (its condition did not hold) answers none for each', async t => {
  const { aloneRuns, create } = recorded(async () => [])
  t.same(await Promise.all([create('tasks', 'a'), create('tasks', 'b')]), [undefined, undefined])
  t.same(aloneRuns, [])
})

t.test('a statement the server refused: each create runs alone, to its own answer', async t => {
  const { aloneRuns, create } = recorded(async () => { throw REFUSED })
  t.same(await Promise.all([create('tasks', 'a'), create('tasks', 'b')]), ['alone a', 'alone b'])
  t.same(aloneRuns, ['a', 'b'])
})

t.test('a statement whose outcome is unknown (a lost connection) fails every create, none made again', async t => {
  const lost = new Error('Connection terminated unexpectedly')
  const { aloneRuns, create } = recorded(async () => { throw lost })
  const outcomes = await Promise.allSettled([create('tasks', 'a'), create('tasks', 'b')])
  t.same(outcomes.map(outcome => outcome.status === 'rejected' ? outcome.reason : outcome.value), [lost, lost])
  t.same(aloneRuns, [], 'nothing ran alone: the statement may have committed')
})

t.test('a statement answering some rows but not all fails every create', async t => {
  const { aloneRuns, create } = recorded(async rows => rows.slice(1).map(() => 'row'))
  const outcomes = await Promise.allSettled([create('tasks', 'a'), create('tasks', 'b'), create('tasks', 'c')])
  t.same(outcomes.map(outcome => outcome.status), ['rejected', 'rejected', 'rejected'])
  t.same(aloneRuns, [])
})

t.test('a turn of more creates than a statement takes sends several', async t => {
  const { statements, create } = recorded(async rows => rows.map(() => 'row'))
  const answers = await Promise.all(Array.from({ length: 1001 }, async (_, i) => await create('tasks', String(i))))
  t.equal(answers.filter(answer => answer === 'row').length, 1000)
  t.same(statements.map(rows => rows.length), [500, 500], 'two full statements; the last create ran alone')
  t.equal(answers[1000], 'alone 1000')
})
