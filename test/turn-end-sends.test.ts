/**
 * turn-end-sends.ts: what a turn writes to a stream goes out in one write at
 * the turn's end; a turn with one write sends it alone; a write made at the
 * end of the turn is sent before the turn is over.
 */
import { Writable } from 'node:stream'
import t from 'tap'
import { atTurnEnd } from '../src/turn-end.js'
import { sendAtTurnEnd } from '../src/turn-end-sends.js'

/** A stream that records each hand-over to its sink as the chunks it carried. */
class RecordingStream extends Writable {
  readonly handedOver: string[][] = []
  override _write (chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.handedOver.push([chunk.toString()])
    callback()
  }

  override _writev (chunks: Array<{ chunk: Buffer }>, callback: () => void): void {
    this.handedOver.push(chunks.map(({ chunk }) => chunk.toString()))
    callback()
  }
}

const turnEnded = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

t.test('the writes of one turn are handed over together at its end', async t => {
  const plain = new RecordingStream()
  const sent = new RecordingStream()
  sendAtTurnEnd(sent)
  for (const stream of [plain, sent]) {
    stream.write('a')
    stream.write('b')
  }
  await Promise.resolve()
  sent.write('c')
  t.same(plain.handedOver, [['a'], ['b']], 'a stream left as it is hands each write over at once')
  t.same(sent.handedOver, [], 'nothing is handed over during the turn')
  await turnEnded()
  t.same(sent.handedOver, [['a', 'b', 'c']], 'all three at its end, in order, in one hand-over')

  sent.write('d')
  await turnEnded()
  t.same(sent.handedOver, [['a', 'b', 'c'], ['d']], 'a later turn is sent at its own end')
})

t.test('a write made at the end of the turn is sent before the turn is over', async t => {
  const sent = new RecordingStream()
  sendAtTurnEnd(sent)
  const order: string[] = []
  atTurnEnd(() => { sent.write('from the end of the turn') })
  setImmediate(() => { order.push(`next in the check phase, ${sent.handedOver.length} sent`) })
  await turnEnded()
  t.same(sent.handedOver, [['from the end of the turn']])
  t.same(order, ['next in the check phase, 1 sent'])
})
