/**
 * The definitions checked with the validator requests meet, before the app
 * starts (and before `resourcery migrate` touches a table): each field's
 * schema compiles, each default passes its field, each value a named filter
 * compares by equality is one its field can hold, and the example is a valid
 * create body. Ajv, not TypeBox, so the verdict is the requests' own: formats
 * (a `date-time` default of `'now'`), decimal `multipleOf`, closed objects.
 * Before, an unknown keyword (`minlength`), format (`phone`) or a pattern that
 * is no regular expression stopped the start in Fastify's words, naming a
 * route (for the pattern, `GET /health`) rather than the resource and field.
 */
import type { TSchema } from '@sinclair/typebox'
import { describeAjvErrors, type AjvError } from '../http/ajv-issues.js'
import { compileLikeBodies } from '../http/validator.js'
import { DefinitionError, EQUALITY_OPERATORS } from './define.js'
import type { Model, Resource } from './model.js'
import { schemasWithin } from './schema-walk.js'

/** The vendor extensions (`x-order`) the fields use, at any depth: annotations for other tools, which validation must know of. */
export function vendorKeywords (model: Model): string[] {
  const schemas = model.resources.flatMap(resource => [...resource.fields.values()].flatMap(field => schemasWithin(field.schema)))
  return [...new Set(schemas.flatMap(schema => Object.keys(schema).filter(key => key.startsWith('x-'))))]
}

/** Ajv's refusal to compile, in the definition's terms. */
function compileFault (message: string): string {
  const keyword = /unknown keyword: "([^"]+)"/.exec(message)?.[1]
  if (keyword !== undefined) return `uses the keyword "${keyword}", which JSON Schema does not have (a typo? an annotation for other tools is named x-…)`
  const format = /unknown format "([^"]+)"/.exec(message)?.[1]
  if (format !== undefined) return `uses the format "${format}", which the validator does not know: use a known one (date, date-time, time, duration, email, hostname, ipv4, ipv6, uri, uuid, regex…) or a pattern`
  return `is not a schema the validator can compile: ${message}`
}

type Compile = ReturnType<typeof compileLikeBodies>
type Validate = ReturnType<Compile> & { errors?: AjvError[] | null }

/** What the validator finds wrong with `value` (a copy: defaults are filled into it), as a client would read it. */
function faultsOf (validate: Validate, value: unknown): string | undefined {
  if (validate(structuredClone(value))) return undefined
  return describeAjvErrors(validate.errors ?? [], 'body', []).map(issue => `${issue.pointer} ${issue.detail}`).join('; ')
}

/**
 * A named filter's equality with a value its field refuses (`where('priority',
 * 'eq', 9)` on a field of 1 to 5) would match nothing, or by `ne` everything,
 * as a client's would (query-schema.ts). A filter computed per request is left
 * to model.ts, which checks it by type on a sample context: bounds could
 * refuse the sample's date where a real one passes.
 */
function checkFilterValues (resource: Resource, validators: ReadonlyMap<string, Validate>, fail: (message: string) => never): void {
  for (const [name, filter] of Object.entries(resource.definition.filters)) {
    if (typeof filter === 'function') continue
    for (const { field, op, value } of filter) {
      const validate = validators.get(field)
      if (validate === undefined || !EQUALITY_OPERATORS.has(op)) continue
      for (const item of op === 'in' ? value as unknown[] : [value]) {
        const refused = faultsOf(validate, { [field]: item })
        if (refused !== undefined) fail(`filter "${name}" compares "${field}" by ${op} with ${JSON.stringify(item)}, a value the field refuses, so no record has it: ${refused}`)
      }
    }
  }
}

function checkResource (resource: Resource, compile: Compile): void {
  const fail = (message: string): never => { throw new DefinitionError(`resource "${resource.collection}": ${message}`) }
  const properties: Record<string, TSchema> = {}
  const validators = new Map<string, Validate>()
  for (const field of resource.fields.values()) {
    properties[field.name] = field.schema
    // As a member, where it stands in a body (Ajv refuses a `default` at a schema's root).
    const alone = { type: 'object', properties: { [field.name]: field.schema } }
    let validate: Validate
    try {
      validate = compile(alone)
    } catch (error) {
      return fail(`field "${field.name}" ${compileFault((error as Error).message)}`)
    }
    // A default the field refuses would answer every create that leaves the field out with a 400 about a value the client never sent.
    const refused = field.hasDefault ? faultsOf(validate, { [field.name]: field.default }) : undefined
    if (refused !== undefined) fail(`the default of field "${field.name}" is refused by its own schema: ${refused}`)
    validators.set(field.name, validate)
  }
  checkFilterValues(resource, validators, fail)
  const { example } = resource.definition
  if (example === undefined) return
  const required = [...resource.fields.values()].filter(field => field.required).map(field => field.name)
  // The documentation would show clients a body that fails.
  const refused = faultsOf(compile({ type: 'object', properties, required, additionalProperties: false }), example)
  if (refused !== undefined) fail(`the example is not a valid create body: ${refused}`)
}

/** Refuses (DefinitionError) a field the validator cannot compile, a default or a named filter's equality value it refuses, or an example that is no valid create body. */
export function checkWithValidator (model: Model, keywords: readonly string[]): void {
  const compile = compileLikeBodies(keywords)
  for (const resource of model.resources) checkResource(resource, compile)
}
