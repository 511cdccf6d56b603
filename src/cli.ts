#!/usr/bin/env node
/**
 * resourcery serve | migrate | openapi | keys | clients | token
 */
import { readFile, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { resources } from '../schemas/index.js'
import { clientsCommand, keysCommand, tokenCommand, UsageError } from './cli/credentials.js'
import { loadConfig, misspelledSettings, type Config } from './config.js'
import { makeFolder } from './folders.js'
import { buildModel } from './resources/model.js'
import { reportStartupFailure, StartupError } from './startup-failure.js'

const USAGE = `usage: resourcery <command>

commands:
  serve              start the HTTP server (configured by environment variables)
  migrate            create or additively extend the database tables, then exit
  openapi [FILE]     write the OpenAPI document (default openapi/openapi.json, and .yaml beside it)
  openapi --check [FILE]
                     exit 1 if FILE is not what the definitions generate
  keys create --name N --scopes "a b" [--expires 30d]
                     create an API key; the key is the last line of output
  keys list | keys revoke ID
  clients create --name N --scopes "a b"
                     create an OAuth client; its secret is the last line of output
  clients list | clients revoke ID
  token --sub S --scopes "a b" [--ttl 1h]
                     print a JWT signed with the service's key, for local use

Configuration comes from the same environment variables as the server (DATABASE_URL, DATA_DIR, JWT_SECRET…).
`

/** The settings, after a warning on stderr for each variable that looks like a misspelled one. */
function settings (): Config {
  const config = loadConfig(process.env)
  for (const { warning } of misspelledSettings(process.env)) process.stderr.write(`resourcery: warning: ${warning}\n`)
  return config
}

async function migrate (): Promise<void> {
  const config = settings()
  const model = buildModel(resources)
  // A definition the server would refuse at start must not have its tables created.
  const { appSchemas } = await import('./app.js')
  appSchemas(model)
  const { openStore } = await import('./store/open.js')
  const store = await openStore(model, config)
  try {
    const { applied } = await store.migrate()
    process.stdout.write(applied.length === 0 ? 'the database is up to date\n' : `${applied.join('\n')}\n`)
  } finally {
    await store.close()
  }
}

/** The JSON document and its YAML twin beside it (`openapi/openapi.json` → `openapi/openapi.yaml`). */
async function openapi (args: string[]): Promise<void> {
  const check = args.includes('--check')
  const jsonFile = args.find(arg => !arg.startsWith('--')) ?? 'openapi/openapi.json'
  const yamlFile = jsonFile.replace(/\.json$/, '.yaml')
  const { json, yaml } = await (await import('./openapi-document.js')).openapiDocument(resources)
  if (check) {
    const stale = []
    for (const [file, text] of [[jsonFile, json], [yamlFile, yaml]] as const) {
      if (await readFile(file, 'utf8').catch(() => '') !== text) stale.push(file)
    }
    if (stale.length > 0) {
      process.stderr.write(`${stale.join(' and ')} stale: run npm run openapi\n`)
      process.exit(1)
    }
    return
  }
  try {
    makeFolder(dirname(jsonFile))
    await writeFile(jsonFile, json)
    await writeFile(yamlFile, yaml)
  } catch (error) {
    throw new StartupError(`cannot write ${jsonFile} and ${yamlFile}: ${(error as Error).message}`)
  }
  process.stdout.write(`wrote ${jsonFile} and ${yamlFile}\n`)
}

async function main ([command, ...args]: string[]): Promise<void> {
  switch (command) {
    // The server, the document generator (Fastify and every plugin) and the store (Kysely and the drivers) are loaded
    // only by the commands that use them: `help`, a usage error and `token` answer in about half the time.
    case 'serve': await (await import('./server.js')).startServer(process.env); return
    case 'migrate': await migrate(); return
    case 'openapi': await openapi(args); return
    case 'keys': await keysCommand(args, settings(), buildModel(resources)); return
    case 'clients': await clientsCommand(args, settings(), buildModel(resources)); return
    case 'token': await tokenCommand(args, settings(), buildModel(resources)); return
    default:
      process.stderr.write(USAGE)
      process.exit(command === undefined || command === 'help' || command === '--help' ? 0 : 2)
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`resourcery: ${error.message}\n`)
    process.exit(2)
  }
  reportStartupFailure(error)
})
