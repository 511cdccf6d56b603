/**
 * turn-end.ts: work that atTurnEnd runs (SQLite's group commit) and the work
 * it asks for with beforeTurnEnds (the answers it settled, written) happen in
 * the same check phase; elsewhere beforeTurnEnds waits for the check phase.
 */
import t from 'tap'
import { atTurnEnd, beforeTurnEnds } from '../src/turn-end.js'

const settled = async (): Promise<void> => { await new Promise(resolve => setTimeout(resolve, 20)) }

t.test('asked for from the end of the turn, and from the promises it settles, work runs before the turn is over', async t => {
  const order: string[] = []
  atTurnEnd(() => {
    Promise.resolve().then(() => Promise.resolve()).then(() => { beforeTurnEnds(() => order.push('asked for from a promise it settled')) }).catch(t.threw)
    beforeTurnEnds(() => order.push('asked for at the end of the turn'))
  })
  setImmediate(() => order.push('the next work of the same check phase'))
  await settled()
  t.same(order, ['asked for at the end of the turn', 'asked for from a promise it settled', 'the next work of the same check phase'])
})

t.test('asked for at any other time, work waits for the end of the turn', async t => {
  const order: string[] = []
  setTimeout(() => {
    beforeTurnEnds(() => order.push('at the end of the turn'))
    process.nextTick(() => order.push('the current callback\'s ticks'))
    setImmediate(() => order.push('the check phase, after it'))
  }, 0)
  // An end of turn that came before leaves nothing behind.
  atTurnEnd(() => {})
  await settled()
  t.same(order, ['the current callback\'s ticks', 'at the end of the turn', 'the check phase, after it'])
})

t.test('work that waited for the end of the turn is the end of the turn: what it asks for runs in the same check phase', async t => {
  // The answers written at the end of a turn finish their requests, whose log lines ask to be written then too.
  const order: string[] = []
  setTimeout(() => {
    beforeTurnEnds(() => {
      order.push('held answers written')
      beforeTurnEnds(() => order.push('their log lines written'))
    })
    setImmediate(() => order.push('the next work of the same check phase'))
  }, 0)
  await settled()
  t.same(order, ['held answers written', 'their log lines written', 'the next work of the same check phase'])
})
