/**
 * The listening process: reads the environment, builds the app, listens, and
 * shuts down gracefully on SIGTERM / SIGINT (in-flight requests finish, the
 * database closes) within a hard deadline.
 */
import { pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { resources } from '../schemas/index.js'
import { readFile } from 'node:fs/promises'
import { buildApp } from './app.js'
import type { TlsMaterial } from './http/transport.js'
import { loadConfig, type Config } from './config.js'
import { reportStartupFailure } from './startup-failure.js'

function stopOnSignals (app: FastifyInstance, config: Config): void {
  let stopping = false
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    const deadline = setTimeout(() => {
      app.log.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown deadline passed; exiting with requests still open')
      process.exit(1)
    }, config.shutdownTimeoutMs)
    deadline.unref()
    app.close().then(() => {
      app.log.info('stopped')
      process.exit(0)
    }, (error: unknown) => {
      app.log.error({ err: error }, 'error while shutting down')
      process.exit(1)
    })
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}

async function readTls (config: Config): Promise<TlsMaterial | undefined> {
  if (config.tlsCertFile === '') return undefined
  const [cert, key] = await Promise.all([readFile(config.tlsCertFile), readFile(config.tlsKeyFile)])
  return { cert, key }
}

/** SIGHUP re-reads the certificate and key; open connections keep theirs, new ones get the new pair. */
function reloadTlsOnHangup (app: FastifyInstance, config: Config): void {
  process.on('SIGHUP', () => {
    readTls(config).then(tls => {
      (app.server as unknown as { setSecureContext (options: TlsMaterial): void }).setSecureContext(tls!)
      app.log.info({ cert: config.tlsCertFile }, 'reloaded the TLS certificate')
    }, (error: unknown) => {
      app.log.error({ err: error }, 'could not reload the TLS certificate; keeping the current one')
    })
  })
}

export async function startServer (env: Readonly<Record<string, string | undefined>>): Promise<FastifyInstance> {
  const config = loadConfig(env)
  const tls = await readTls(config)
  const app = await buildApp({ config, definitions: resources, ...(tls === undefined ? {} : { tls }) })
  stopOnSignals(app, config)
  if (tls !== undefined) reloadTlsOnHangup(app, config)
  await app.listen({ host: config.host, port: config.port })
  return app
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startServer(process.env).catch(reportStartupFailure)
}
