/**
 * Answers go to the kernel together, once the event loop has handled every
 * connection that was ready, rather than one by one as each is finished.
 *
 * Why: a write to a client that is asleep waiting for it wakes that client,
 * and on a machine the client shares (loopback: a proxy or a load balancer on
 * the same host, the benchmark's load generator) the writer pays for the wake
 * in the kernel: an inter-processor interrupt, a VM exit under a hypervisor.
 * `perf` put 11.8 % of the service's GET one in that wake alone
 * (`sock_def_readable` under `writev`). Node writes each answer at its
 * `end()`, so a turn that finished 40 answers woke the client up to 40 times;
 * written back to back at the end of the turn, the first wakes it and the
 * rest find it awake. An answer waits at most for the rest of its turn, which
 * is the time the service takes to finish the other answers already in hand.
 *
 * How: a socket's `_write` / `_writev`, the hooks through which a Writable
 * hands its bytes on and which may complete later (they report by callback),
 * are held here and run in the check phase that follows the poll phase in
 * which requests are read and answered (turn-end.ts; answers SQLite's group
 * commit settles there go as soon as they are all written). `'finish'`
 * and everything after it wait for the callback as they would for a slow
 * socket. A socket destroyed meanwhile writes what it holds first, so that
 * `write()` then `destroy()` sends the bytes as it does without holding.
 * HTTP/2 sessions write through Node's native stream and are left alone, as
 * is a socket whose hooks are not net.Socket's.
 */
import type { Server as HttpServer } from 'node:http'
import { Socket } from 'node:net'
import { Server as TlsServer, type TLSSocket } from 'node:tls'
import { beforeTurnEnds } from '../turn-end.js'

type WriteCallback = (error?: Error | null) => void
type Chunks = Array<{ chunk: unknown, encoding: BufferEncoding }>

/** A write handed on by a socket and not yet made; `write` is gone once it was. */
interface HeldWrite { readonly socket: Socket, write?: () => void }

const { _write: writeNow, _writev: writevNow, _destroy: destroyNow } = Socket.prototype

let held: HeldWrite[] = []

function makeHeldWrites (): void {
  const writes = held
  // Writes a callback starts (a socket's next buffered chunks) are held for the next turn.
  held = []
  for (const entry of writes) makeOnce(entry)
}

function makeOnce (entry: HeldWrite): void {
  const { write } = entry
  entry.write = undefined
  write?.()
}

function hold (socket: Socket, write: () => void): void {
  if (held.length === 0) beforeTurnEnds(makeHeldWrites)
  held.push({ socket, write })
}

function holdWrite (this: Socket, chunk: unknown, encoding: BufferEncoding, callback: WriteCallback): void {
  hold(this, () => { writeNow.call(this, chunk, encoding, callback) })
}

function holdWritev (this: Socket, chunks: Chunks, callback: WriteCallback): void {
  hold(this, () => { writevNow!.call(this, chunks, callback) })
}

function writeThenDestroy (this: Socket, error: Error | null, callback: WriteCallback): void {
  for (const entry of held) if (entry.socket === this) makeOnce(entry)
  destroyNow.call(this, error, callback)
}

/** Every HTTP/1 connection of `server` (over TLS too) hands its writes on at the end of the event loop's turn. */
export function writeAnswersAtTurnEnd (server: HttpServer): void {
  // Over TLS, HTTP writes to the socket 'secureConnection' brings, which encrypts into the TCP one natively.
  const event = server instanceof TlsServer ? 'secureConnection' : 'connection'
  server.on(event, function holdWritesToTurnEnd (socket: Socket) {
    if ((socket as Partial<TLSSocket>).alpnProtocol === 'h2') return
    // A socket that writes or closes otherwise than net.Socket (a later Node's TLS socket, say) is left as it is.
    if (socket._write !== writeNow || socket._writev !== writevNow || socket._destroy !== destroyNow) return
    socket._write = holdWrite
    socket._writev = holdWritev
    socket._destroy = writeThenDestroy
  })
}
