/**
 * write-batches.ts: a turn's writes of one group go to `writeMany`
 * together, each answered with its row; alone in its turn, a write runs
 * alone; a statement the server refused sends each write alone, and one
 * whose outcome is unknown fails them all without making any again; a
 * write whose key its group already holds runs alone.
 */
import t from 'tap'
import { writeBatches } from '../../src/store/write-batches.js'

const REFUSED = new Error('refused by the server')

/**
 * A batcher whose statements are recorded and answered by `answer`; `alone` answers `alone <value>`.
 * With `distinct`, the first letter of a value is its key.
 */
function recorded (answer: (rows: ReadonlyArray<readonly unknown[]>) => Promise<ReadonlyArray<string | undefined>>, distinct = false) {
  const statements: unknown[][][] = []
  const aloneRuns: unknown[] = []
  const batches = writeBatches<string, string>({
    writeMany: async (_group, rows) => { statements.push(rows.map(row => [...row])); return await answer(rows) },
    undone: error => error === REFUSED,
    ...(distinct ? { distinct: ([value]: readonly unknown[]) => String(value)[0] } : {})
  })
  const create = async (group: string, value: string): Promise<string | undefined> =>
    await batches.write(group, [value], async () => { aloneRuns.push(value); return `alone ${value}` })
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

t.test('a row the statement did not write (its condition did not hold for it) is answered with none', async t => {
  const { aloneRuns, create } = recorded(async rows => rows.map(([value]) => value === 'b' ? undefined : `row ${String(value)}`))
  t.same(await Promise.all([create('tasks', 'a'), create('tasks', 'b'), create('tasks', 'c')]), ['row a', undefined, 'row c'])
  t.same(aloneRuns, [])
})

t.test('a write whose key its group already holds in this turn runs alone', async t => {
  const { statements, aloneRuns, create } = recorded(async rows => rows.map(([value]) => `row ${String(value)}`), true)
  t.same(await Promise.all([create('tasks', 'a1'), create('tasks', 'b1'), create('tasks', 'a2'), create('projects', 'a3'), create('tasks', 'c1')]),
    ['row a1', 'row b1', 'alone a2', 'alone a3', 'row c1'])
  t.same(statements, [[['a1'], ['b1'], ['c1']]], 'the second write of key a is not in the statement')
  t.same(aloneRuns, ['a2', 'a3'], 'it ran alone (and a3, alone in its group)')
  t.same(await Promise.all([create('tasks', 'a4'), create('tasks', 'b4')]), ['row a4', 'row b4'], 'a later turn holds its own keys')
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

t.test('a statement answering for fewer rows than it was given fails every write', async t => {
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
