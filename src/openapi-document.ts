/**
 * The OpenAPI document as committed in openapi/: generated from the
 * definitions with default settings, so it does not depend on the machine
 * or environment that generates it.
 */
import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import { documentYaml } from './http/document-yaml.js'
import type { ResourceDefinition } from './resources/define.js'

export interface OpenApiFiles {
  readonly json: string
  readonly yaml: string
}

export async function openapiDocument (definitions: readonly ResourceDefinition[]): Promise<OpenApiFiles> {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', JWT_SECRET: 'only-used-to-build-the-document-not-to-sign' })
  const app = await buildApp({ config, definitions })
  try {
    await app.ready()
    const document = app.swagger()
    return { json: `${JSON.stringify(document, null, 2)}\n`, yaml: documentYaml(document) }
  } finally {
    await app.close()
  }
}
