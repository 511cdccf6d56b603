/**
 * The listening process: reads the environment, builds the app, listens, and
 * shuts down gracefully on SIGTERM / SIGINT, and SIGHUP on plain HTTP (with
 * TLS, SIGHUP reloads the certificate): in-flight requests finish, the
 * database closes, within a hard deadline.
 */
import { readFile } from 'node:fs/promises'
import { createSecureContext } from 'node:tls'
import { pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { resources } from '../schemas/index.js'
import { buildApp } from './app.js'
import { endLog } from './http/log-output.js'
import type { TlsMaterial } from './http/transport.js'
import { loadConfig, misspelledSettings, type Config } from './config.js'
import { reportStartupFailure, StartupError } from './startup-failure.js'

/** Exits once the last log lines are written (see endLog: a broken stdout must not hold the exit). */
function exitAfterLog (app: FastifyInstance, code: number): void {
  endLog(app.log).finally(() => process.exit(code))
}

/** `signals` stop the process gracefully; SIGHUP among them on plain HTTP, where it has nothing to reload. */
function stopOnSignals (app: FastifyInstance, config: Config, signals: readonly NodeJS.Signals[]): void {
  let stopping = false
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    const deadline = setTimeout(() => {
      app.log.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown deadline passed; exiting with requests still open')
      exitAfterLog(app, 1)
    }, config.shutdownTimeoutMs)
    deadline.unref()
    app.close().then(() => {
      app.log.info('stopped')
      exitAfterLog(app, 0)
    }, (error: unknown) => {
      app.log.error({ err: error }, 'error while shutting down')
      exitAfterLog(app, 1)
    })
  }
  for (const signal of signals) process.once(signal, stop)
}

async function readSetting (name: string, file: string): Promise<Buffer> {
  try {
    return await readFile(file)
  } catch (error) {
    throw new StartupError(`${name}=${file} cannot be read: ${(error as Error).message}`)
  }
}

/** The certificate and key, checked to be PEM and a pair here, where the message can name the settings, rather than by the server. */
async function readTls (config: Config): Promise<TlsMaterial | undefined> {
  if (config.tlsCertFile === '') return undefined
  const [cert, key] = await Promise.all([readSetting('TLS_CERT_FILE', config.tlsCertFile), readSetting('TLS_KEY_FILE', config.tlsKeyFile)])
  try {
    createSecureContext({ cert, key })
  } catch (error) {
    throw new StartupError(`TLS_CERT_FILE=${config.tlsCertFile} and TLS_KEY_FILE=${config.tlsKeyFile} are not a PEM certificate and its private key: ${(error as Error).message}`)
  }
  return { cert, key }
}

/** What an operator does about an address the server cannot listen on. */
const LISTEN_REMEDIES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'another process listens there: stop it or set another PORT',
  EACCES: 'a port below 1024 needs privileges: set a PORT of 1024 or above, or run with the capability to bind it',
  EADDRNOTAVAIL: 'HOST is not an address of this machine'
}

async function listen (app: FastifyInstance, config: Config): Promise<void> {
  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (error) {
    const remedy = LISTEN_REMEDIES[(error as NodeJS.ErrnoException).code ?? '']
    if (remedy === undefined) throw error
    await app.close()
    throw new StartupError(`cannot listen on HOST=${config.host} PORT=${config.port}: ${remedy}`)
  }
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
  for (const { name, meant, warning } of misspelledSettings(env)) app.log.warn({ variable: name, meant }, warning)
  // Node's default for SIGHUP (a closed terminal) ends the process at once, cutting off the requests in flight.
  if (tls !== undefined) reloadTlsOnHangup(app, config)
  stopOnSignals(app, config, tls === undefined ? ['SIGTERM', 'SIGINT', 'SIGHUP'] : ['SIGTERM', 'SIGINT'])
  await app.ready()
  // A document that cannot be made is a bug to report, not a reason to refuse the API: /openapi.json tries again.
  const making = performance.now()
  await app.prepareDocument().then(
    () => { app.log.info({ ms: Math.round(performance.now() - making) }, 'OpenAPI document made') },
    (error: unknown) => { app.log.error({ err: error }, 'could not make the OpenAPI document') }
  )
  await listen(app, config)
  return app
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startServer(process.env).catch(reportStartupFailure)
}
