/**
 * Each field's schema compiled as request bodies are, before the app starts.
 * A keyword Ajv does not know (`minlength`, `errorMessage`), a format it does
 * not know (`phone`) or a pattern that is no regular expression stopped the
 * start in Fastify's words, naming a route (for a pattern, `GET /health`)
 * rather than the resource and the field.
 */
import { compileLikeBodies } from '../http/validator.js'
import { DefinitionError } from './define.js'
import type { Model } from './model.js'
import { schemasWithin } from './schema-walk.js'

/** The vendor extensions (`x-order`) the fields use, at any depth: annotations for other tools, which validation must know of. */
export function vendorKeywords (model: Model): string[] {
  const schemas = model.resources.flatMap(resource => [...resource.fields.values()].flatMap(field => schemasWithin(field.schema)))
  return [...new Set(schemas.flatMap(schema => Object.keys(schema).filter(key => key.startsWith('x-'))))]
}

/** Ajv's refusal in the definition's terms. */
function sentence (message: string): string {
  const keyword = /unknown keyword: "([^"]+)"/.exec(message)?.[1]
  if (keyword !== undefined) return `uses the keyword "${keyword}", which JSON Schema does not have (a typo? an annotation for other tools is named x-…)`
  const format = /unknown format "([^"]+)"/.exec(message)?.[1]
  if (format !== undefined) return `uses the format "${format}", which the validator does not know: use a known one (date, date-time, time, duration, email, hostname, ipv4, ipv6, uri, uuid, regex…) or a pattern`
  return `is not a schema the validator can compile: ${message}`
}

/** Refuses (DefinitionError) a field whose schema the validator cannot compile, naming the resource and the field. */
export function checkFieldSchemasCompile (model: Model, keywords: readonly string[]): void {
  const compile = compileLikeBodies(keywords)
  for (const resource of model.resources) {
    for (const field of resource.fields.values()) {
      try {
        // As a member, where it stands in a body (Ajv refuses a `default` at a schema's root).
        compile({ type: 'object', properties: { [field.name]: field.schema } })
      } catch (error) {
        throw new DefinitionError(`resource "${resource.collection}": field "${field.name}" ${sentence((error as Error).message)}`)
      }
    }
  }
}
