/**
 * HTTP/1.1 written by hand on a socket of its own, for what light-my-request
 * cannot send: a target of `*` (it makes it `/*`), no Host or two, bytes
 * Node's parser refuses, pipelined requests, a request split over reads.
 */
import { connect } from 'node:net'
import type { Json } from '../helper.js'

/**
 * Writes each part in turn, the next once the one before has surely been read
 * on its own (Node judges an overflow on the read that holds it), and resolves
 * with everything the server answers until it closes (ask it to:
 * `Connection: close`). The client never ends its side first: Node's server
 * takes that as the client leaving, and drops a request whose handler is
 * still at work.
 */
export async function exchange (port: number, ...parts: readonly string[]): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    socket.on('data', chunk => { data += chunk.toString() })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
    const writeFrom = (index: number): void => {
      if (index >= parts.length || socket.destroyed) return
      socket.write(parts[index]!)
      setTimeout(() => writeFrom(index + 1), 50)
    }
    writeFrom(0)
  })
}

/** The problem carried by an answer read off a socket (one answer only). */
export const rawProblem = (answer: string): Json => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Json

/**
 * The status lines of pipelined answers, in order. An answer's status line
 * follows the body before it directly, with no line break between.
 */
export const statusLines = (answers: string): string[] => answers.match(/HTTP\/1\.1 \d{3}(?= )/g) ?? []
