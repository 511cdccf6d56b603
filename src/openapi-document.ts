/**
 * The OpenAPI document as committed in openapi/: generated from the
 * definitions with default settings, so it does not depend on the machine
 * or environment that generates it.
 */
import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import type { ResourceDefinition } from './resources/define.js'

export async function openapiDocument (definitions: readonly ResourceDefinition[]): Promise<string> {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' })
  const app = await buildApp({ config, definitions })
  try {
    await app.ready()
    return `${JSON.stringify(app.swagger(), null, 2)}\n`
  } finally {
    await app.close()
  }
}
