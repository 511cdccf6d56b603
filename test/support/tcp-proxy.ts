/**
 * A TCP proxy on loopback in front of a real service (Redis, PostgreSQL) that
 * a test can cut and restore, to play an outage without touching the service.
 */
import { connect, createServer, type Server, type Socket } from 'node:net'

export interface CuttableProxy {
  /** The proxy's port: point the client here instead of at the service. */
  readonly port: number
  /** Stops accepting and drops every open connection. */
  cut (): void
  /** Accepts connections again, on the same port. */
  restore (): Promise<void>
}

export async function cuttableProxy (targetPort: number, targetHost = '127.0.0.1'): Promise<CuttableProxy> {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  const start = async (): Promise<void> => {
    const listening = createServer(client => {
      const upstream = connect(targetPort, targetHost)
      sockets.add(client).add(upstream)
      client.pipe(upstream).pipe(client)
      const drop = (): void => { client.destroy(); upstream.destroy() }
      client.on('error', drop).on('close', drop)
      upstream.on('error', drop).on('close', drop)
    })
    await new Promise<void>(resolve => listening.listen(port, '127.0.0.1', resolve))
    port = (listening.address() as { port: number }).port
    server = listening
  }
  await start()
  return {
    get port () { return port },
    cut () {
      server?.close()
      for (const socket of sockets) socket.destroy()
      sockets.clear()
    },
    restore: start
  }
}

/** Whether something accepts TCP connections on this port (to skip, visibly, when a service is absent). */
export async function answers (port: number, host = '127.0.0.1'): Promise<boolean> {
  return await new Promise(resolve => {
    const socket = connect(port, host)
    socket.setTimeout(1000)
    socket.on('connect', () => { socket.end(); resolve(true) })
    socket.on('error', () => resolve(false))
    socket.on('timeout', () => { socket.destroy(); resolve(false) })
  })
}
