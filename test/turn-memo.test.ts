/**
 * turnMemo: what the requests of one turn of the event loop share, made once
 * a key in the turn and made afresh in the next.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { turnMemo } from '../src/turn-memo.js'

t.test('a value is made once a key in a turn, and afresh in the next turn', async t => {
  const made: string[] = []
  const memo = turnMemo<object, string>()
  const one = {}
  const other = {}
  const make = (key: object): string => {
    const value = `${key === one ? 'one' : 'other'} ${made.length}`
    made.push(value)
    return value
  }
  t.same([memo(one, make), memo(other, make), memo(one, make)], ['one 0', 'other 1', 'one 0'], 'keys by identity; asked twice, made once')
  await Promise.resolve()
  t.equal(memo(one, make), 'one 0', 'still this turn after its promises')
  await nextTurn()
  t.equal(memo(one, make), 'one 2', 'the next turn makes it again')
  t.equal(made.length, 3)
})

t.test('a failure is not kept', async t => {
  const memo = turnMemo<string, number>()
  t.throws(() => memo('k', () => { throw new Error('the database is away') }), /away/)
  t.equal(memo('k', () => 7), 7)
})
