/**
 * One delivery's HTTP exchange with a receiver: what the receiver answers is
 * read for its status and Retry-After only, and never without bound.
 */
import { createServer, globalAgent, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { MAX_DRAINED_BYTES, sendWebhook } from '../../src/webhooks/send.js'

/** A receiver that answers every delivery with `answer`; `closed` settles when the connection of its last answer closes. */
async function receiver (t: Test, answer: (response: ServerResponse) => void): Promise<{ url: URL, closed: () => Promise<boolean>, connections: () => number }> {
  let closing: Promise<boolean> = Promise.resolve(false)
  let connections = 0
  const server = createServer((request, response) => {
    request.resume()
    // True when the connection closed before the answer was all sent.
    closing = new Promise(resolve => response.once('close', () => { resolve(!response.writableFinished) }))
    answer(response)
  })
  server.on('connection', () => { connections++ })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`), closed: async () => await closing, connections: () => connections }
}

const target = { address: '127.0.0.1', family: 4 as const }

t.test('a receiver that answers without end is cut off after MAX_DRAINED_BYTES; its status still counts', async t => {
  const { url, closed } = await receiver(t, response => {
    response.writeHead(200, { 'retry-after': '7' })
    const chunk = 'x'.repeat(16 * 1024)
    const more = (): void => {
      while (!response.destroyed) if (!response.write(chunk)) { response.once('drain', more); return }
    }
    more()
  })
  t.same(await sendWebhook(url, target, { headers: {}, body: '{}', timeoutMs: 5000 }), { status: 200, retryAfterSeconds: 7 })
  t.equal(await closed(), true, 'the endless answer was not read to its end')
})

t.test('a short answer is drained whole, so its connection serves the next delivery', async t => {
  const { url, connections } = await receiver(t, response => { response.writeHead(410).end('x'.repeat(MAX_DRAINED_BYTES / 2)) })
  t.same(await sendWebhook(url, target, { headers: {}, body: '{}', timeoutMs: 5000 }), { status: 410 })
  // The answer is drained after its status is taken: the connection is free again once it has all arrived.
  while (Object.keys(globalAgent.freeSockets).length === 0) await new Promise(resolve => setTimeout(resolve, 5))
  t.same(await sendWebhook(url, target, { headers: {}, body: '{}', timeoutMs: 5000 }), { status: 410 })
  t.equal(connections(), 1)
})
