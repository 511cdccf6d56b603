import { connect, type Socket } from 'node:net'
import t from 'tap'
import { ADMIN, buildTestApp, listen } from '../helper.js'

/** A raw connection: what the server has sent so far, and when it closed. */
interface Exchange { readonly socket: Socket, received: () => string, readonly closed: Promise<void> }

async function open (base: string): Promise<Exchange> {
  const socket = connect(Number(new URL(base).port), '127.0.0.1')
  let data = ''
  socket.on('data', chunk => { data += chunk.toString() })
  const closed = new Promise<void>(resolve => socket.on('close', () => { resolve() }))
  await new Promise(resolve => socket.once('connect', resolve))
  return { socket, received: () => data, closed }
}

const settle = async (): Promise<void> => { await new Promise(resolve => setTimeout(resolve, 150)) }

function head (headers: Record<string, string>, length: number): string {
  return `POST /v1/projects HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nContent-Length: ${length}\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`
}

t.test('Expect: 100-continue: the body is asked for only once the request would be taken, and a refusal comes before any upload', async t => {
  const app = await buildTestApp(t, { env: { BODY_LIMIT: '2048' } })
  const base = await listen(app)
  const body = JSON.stringify({ name: 'uploaded after 100' })

  const accepted = await open(base)
  accepted.socket.write(head({ authorization: ADMIN, 'content-type': 'application/json' }, Buffer.byteLength(body)))
  await settle()
  t.equal(accepted.received(), 'HTTP/1.1 100 Continue\r\n\r\n', 'a request that will be read is told to send its body, and nothing else yet')
  accepted.socket.end(body)
  await accepted.closed
  t.match(accepted.received(), /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /, 'then it is created')

  const refusals: Array<{ name: string, headers: Record<string, string>, length: number, status: number }> = [
    { name: 'no credential', headers: { 'content-type': 'application/json' }, length: 100, status: 401 },
    { name: 'a media type the route does not take', headers: { authorization: ADMIN, 'content-type': 'text/plain' }, length: 100, status: 415 },
    { name: 'a body over the limit', headers: { authorization: ADMIN, 'content-type': 'application/json' }, length: 4096, status: 413 },
    { name: 'a JSON-refusing Accept', headers: { authorization: ADMIN, 'content-type': 'application/json', accept: 'text/html' }, length: 100, status: 406 }
  ]
  for (const { name, headers, length, status } of refusals) {
    const refused = await open(base)
    // The body is never sent: the client waits for 100 Continue, as RFC 9110 lets it.
    refused.socket.write(head(headers, length))
    await refused.closed
    const answer = refused.received()
    t.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), `${name}: ${status} at once, with no 100 Continue before it`)
    t.notMatch(answer, /100 Continue/, `${name}: the body was never asked for`)
    t.match(answer, /\r\nconnection: close\r\n/i, `${name}: the connection closes, since the client might still send the body`)
    t.match(answer, /\r\ncontent-type: application\/problem\+json/, `${name}: a problem`)
  }
})
