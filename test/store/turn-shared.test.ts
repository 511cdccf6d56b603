/**
 * Identical reads of one turn, made once at its end (turn-shared.ts), without
 * a database: a recording reader shows when each read starts and how many
 * there were. On PostgreSQL the store's pages go through it
 * (remembered-pages.test.ts counts the queries and checks the answers).
 */
import t from 'tap'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { turnShared } from '../../src/store/turn-shared.js'

/** A reader that records each read it makes and answers with its key and its count so far. */
function recordingReader (): { made: string[], read: (key: string) => () => Promise<string> } {
  const made: string[] = []
  return {
    made,
    read: key => async () => {
      made.push(key)
      return `${key} #${made.length}`
    }
  }
}

t.test('the same key asked for in one turn is read once, at the end of the turn, for every asker', async t => {
  const pages = turnShared<string>()
  const { made, read } = recordingReader()
  const asked = [pages.load('a', read('a')), pages.load('b', read('b')), pages.load('a', read('a')), pages.load('a', read('a'))]
  await Promise.resolve()
  t.same(made, [], 'nothing is read while the turn goes on')
  t.same(await Promise.all(asked), ['a #1', 'b #2', 'a #1', 'a #1'], 'each asker gets the answer of its key')
  t.same(made, ['a', 'b'], 'one read a key')
})

t.test('a later turn reads again, and a key asked for while its read runs waits for a read of its own', async t => {
  const pages = turnShared<string>()
  const { made, read } = recordingReader()
  t.equal(await pages.load('a', read('a')), 'a #1')
  t.equal(await pages.load('a', read('a')), 'a #2', 'the next turn is not given the last one\'s answer')
  const first = pages.load('a', read('a'))
  await nextTurn()
  // The first read has started; one asked for now must see what was written since it was sent.
  const second = pages.load('a', read('a'))
  t.same(await Promise.all([first, second]), ['a #3', 'a #4'])
  t.same(made, ['a', 'a', 'a', 'a'])
})

t.test('a failed read fails every asker of its key, and the next turn tries again', async t => {
  const pages = turnShared<string>()
  let reads = 0
  const failing = async (): Promise<string> => {
    reads++
    throw new Error('the database is unavailable')
  }
  const asked = [pages.load('a', failing), pages.load('a', failing), pages.load('b', async () => 'b')]
  const settled = await Promise.allSettled(asked)
  t.same(settled.map(result => result.status), ['rejected', 'rejected', 'fulfilled'], 'the other key is answered')
  t.equal(reads, 1, 'one read failed for both')
  t.equal(await pages.load('a', async () => 'a again'), 'a again', 'the failure is not kept')
})
