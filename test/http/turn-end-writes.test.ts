/**
 * writeAnswersAtTurnEnd (src/http/turn-end-writes.ts) holds a connection's
 * writes to the end of the event loop's turn. What a client receives must be
 * what it receives without holding: every answer whole, in order, on its own
 * connection, also when the socket is destroyed right after the write, and
 * over TLS. And the holding must still happen: a Node that stopped calling the
 * hooks it replaces would silently take the slower path.
 */
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingMessage, type RequestListener, type Server } from 'node:http'
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https'
import { connect, Socket, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { writeAnswersAtTurnEnd } from '../../src/http/turn-end-writes.js'
import { selfSigned } from '../support/self-signed.js'

async function listening (t: Test, server: Server, handler: RequestListener): Promise<number> {
  server.on('request', handler)
  writeAnswersAtTurnEnd(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => {
    server.closeAllConnections()
    server.close()
    await once(server, 'close')
  })
  return (server.address() as AddressInfo).port
}

async function bodyOf (response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString()
}

/** Everything the server sends on one raw connection after `sent`, until it closes. */
async function rawExchange (port: number, sent: string): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', chunk => chunks.push(chunk))
  socket.write(sent)
  await once(socket, 'close')
  return Buffer.concat(chunks).toString()
}

t.test('an answer is held to the end of the turn, then written, and "finish" waits for it', async t => {
  const seen: Array<{ heldAtEnd: number, heldNextTurn: number }> = []
  const port = await listening(t, createServer(), (request, response) => {
    response.end(`answer to ${request.url ?? ''}`)
    const socket = response.socket!
    const heldAtEnd = socket.writableLength
    setImmediate(() => { seen.push({ heldAtEnd, heldNextTurn: socket.writableLength }) })
  })
  const response = await new Promise<IncomingMessage>(resolve => httpRequest({ port, path: '/one' }, resolve).end())
  t.equal(response.statusCode, 200)
  t.equal(await bodyOf(response), 'answer to /one')
  t.equal(seen.length, 1)
  t.ok(seen[0]!.heldAtEnd > 0, 'the bytes are still the socket\'s own right after end()')
  t.equal(seen[0]!.heldNextTurn, 0, 'and handed to the kernel by the end of the turn')
})

t.test('answers finished in one turn each reach their own connection, whole', async t => {
  const port = await listening(t, createServer(), (request, response) => {
    const id = request.url!.slice(1)
    response.setHeader('x-id', id)
    response.end(JSON.stringify({ id, padding: 'x'.repeat(2000) }))
  })
  const answers = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const response = await new Promise<IncomingMessage>(resolve => httpRequest({ port, path: `/${i}`, agent: false }, resolve).end())
    return { header: response.headers['x-id'], body: JSON.parse(await bodyOf(response)) as { id: string, padding: string } }
  }))
  for (const [i, { header, body }] of answers.entries()) {
    t.equal(header, String(i))
    t.equal(body.id, String(i))
    t.equal(body.padding.length, 2000)
  }
})

t.test('pipelined requests are answered in order, and a streamed answer of many writes arrives whole', async t => {
  const port = await listening(t, createServer(), (request, response) => {
    if (request.url === '/big') {
      // 64 writes of 64 KiB: more than a socket takes at once, so some writes complete later, after the kernel drained.
      const piece = 'y'.repeat(65536)
      let left = 64
      response.setHeader('content-length', 64 * 65536)
      const more = (): void => {
        while (left > 0) {
          left--
          if (!response.write(piece)) { response.once('drain', more); return }
        }
        response.end()
      }
      more()
      return
    }
    response.end(request.url)
  })
  const sent = ['/a', '/big', '/b', '/c'].map((path, i, all) => `GET ${path} HTTP/1.1\r\nHost: x\r\n${i === all.length - 1 ? 'Connection: close\r\n' : ''}\r\n`).join('')
  const received = await rawExchange(port, sent)
  const answers = received.split(/HTTP\/1\.1 200 OK\r\n/).slice(1)
  t.equal(answers.length, 4, 'four answers')
  t.ok(answers[0]!.endsWith('/a'))
  t.equal(answers[1]!.split('\r\n\r\n')[1], 'y'.repeat(64 * 65536), 'the streamed answer is whole')
  t.ok(answers[2]!.endsWith('/b'))
  t.ok(answers[3]!.endsWith('/c'))
})

t.test('bytes written before destroy() are sent, as they are without holding', async t => {
  const port = await listening(t, createServer(), (_request, response) => {
    const socket: Socket = response.socket!
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nsent')
    socket.destroy()
  })
  const received = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  t.match(received, /^HTTP\/1\.1 200 OK\r\n/)
  t.ok(received.endsWith('\r\n\r\nsent'))
})

// Over TLS a write completes later anyway (it is encrypted first), so holding cannot be told apart from outside:
// that the socket's hook was replaced says it is held.
t.test('over TLS an answer held to the end of the turn arrives whole', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'resourcery-turn-end-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const { cert, key } = selfSigned(dir, 'server')
  const ca = readFileSync(cert)
  let hookReplaced = false
  const server = createHttpsServer({ cert: ca, key: readFileSync(key) })
  const port = await listening(t, server, (_request, response) => {
    response.end('z'.repeat(100_000))
    hookReplaced = response.socket!._write !== Socket.prototype._write
  })
  const response = await new Promise<IncomingMessage>(resolve => httpsRequest({ port, host: '127.0.0.1', ca, path: '/' }, resolve).end())
  t.equal(response.statusCode, 200)
  t.equal(await bodyOf(response), 'z'.repeat(100_000))
  t.ok(hookReplaced, 'the TLS socket\'s writes are held')
})
