/**
 * Request validation: Fastify's Ajv with the lenient defaults turned off (no
 * stripping of unknown properties, no type coercion of bodies, every error
 * reported), plus strict conversion of path and query strings. Ajv's own
 * coercion would accept `0x10`, `""` or round numbers past 2^53; here an
 * integer is plain decimal digits, a number is written as JSON writes one
 * (`0.5`, `1e-9`: what a client's own number-to-string gives) and is finite,
 * and anything else fails validation.
 */
import { AjvCompiler } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'
import { compiledOnce } from './compiled-once.js'
import { isStorableDateTime } from './date-time.js'
import { decimalMultipleOf } from './decimal-multiple.js'
import { declaredParameters, unknownParameterSentence } from './query-parameters.js'

export const AJV_OPTIONS = {
  removeAdditional: false,
  coerceTypes: false,
  useDefaults: true,
  allErrors: true,
  // Each error carries the value it is about, so that a type error can name what was sent (ajv-issues.ts).
  verbose: true
} as const

interface PropertySchema {
  type?: string
  minimum?: number
  maximum?: number
  items?: PropertySchema
}

interface PartSchema {
  type?: string
  properties?: Record<string, PropertySchema>
}

type Validate = ((data: unknown) => boolean | Promise<unknown>) & { errors?: unknown }

const INTEGER = /^-?(0|[1-9][0-9]*)$/
/** Digits a reader would call an integer, though not written as INTEGER wants: `+1`, `007`. */
const SIGNED_DIGITS = /^[+-]?[0-9]+$/
/** RFC 8259's number grammar. */
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/

/** Converts the string value of a declared property to its declared type, when it is written strictly. */
export function convertString (type: string | undefined, raw: string): unknown {
  if (type === 'integer' && INTEGER.test(raw)) {
    const value = Number(raw)
    return Number.isSafeInteger(value) ? value : raw
  }
  if (type === 'number' && JSON_NUMBER.test(raw)) {
    const value = Number(raw)
    return Number.isFinite(value) ? value : raw
  }
  if (type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true'
  return raw
}

/**
 * `x=1&x=2` for a parameter that takes one value: Ajv would say "must be
 * integer" of a value that was an integer twice, so say what is wrong.
 */
function repeatedError (name: string, count: number): AjvErrorLike {
  return { keyword: 'repeated', instancePath: `/${name}`, schemaPath: '', params: { count }, message: `is given ${count} times; give it once` }
}

interface AjvErrorLike { keyword: string, instancePath: string, schemaPath: string, params: Record<string, unknown>, message: string }

const explained = (error: AjvErrorLike, keyword: string, instancePath: string, message: string): AjvErrorLike =>
  ({ ...error, keyword, instancePath, message })

/**
 * "must be integer" of `9007199254740992` or `007` is true to Ajv but not to a
 * reader: say that the first is out of range and how to write the second (and
 * how to write one at all, since a query value is always text).
 */
function integerError (error: AjvErrorLike, raw: unknown, property: PropertySchema): AjvErrorLike {
  if (typeof raw !== 'string') return error
  if (!SIGNED_DIGITS.test(raw)) return explained(error, 'integerForm', error.instancePath, 'must be an integer written in plain digits, such as 12')
  if (!INTEGER.test(raw)) return explained(error, 'integerForm', error.instancePath, 'must be an integer written in plain digits, without "+" or leading zeros')
  return raw.startsWith('-')
    ? explained(error, 'minimum', error.instancePath, `must be >= ${property.minimum ?? Number.MIN_SAFE_INTEGER}`)
    : explained(error, 'maximum', error.instancePath, `must be <= ${property.maximum ?? Number.MAX_SAFE_INTEGER}`)
}

/**
 * "must be number" of `1e400` or `.5` leaves a reader guessing: say that the
 * first is out of range and how a number is written.
 */
function numberError (error: AjvErrorLike, raw: unknown): AjvErrorLike {
  if (typeof raw !== 'string') return error
  return JSON_NUMBER.test(raw)
    ? explained(error, 'maximum', error.instancePath, 'must be a number within ±1.8e308')
    : explained(error, 'numberForm', error.instancePath, 'must be a number written as JSON writes one, such as 12, -0.5 or 1e-9')
}

/** The raw value an error's path names and its schema: a parameter (`/budget`), or one item of a list (`/budget[in]/1`). */
function valueAt (values: Record<string, unknown>, properties: Map<string, PropertySchema>, instancePath: string): { raw: unknown, schema: PropertySchema } | undefined {
  const [name = '', index] = instancePath.slice(1).split('/')
  const property = properties.get(name)
  if (property === undefined) return undefined
  const value = values[name]
  if (index === undefined) return { raw: value, schema: property }
  return { raw: Array.isArray(value) ? value[Number(index)] : undefined, schema: property.items ?? {} }
}

/** Ajv's errors, each one about a path or query value re-worded where Ajv's words would mislead. */
function explainErrors (errors: AjvErrorLike[], values: Record<string, unknown>, properties: Map<string, PropertySchema>, explainUnknown: ((name: string) => string) | undefined): AjvErrorLike[] {
  return errors.map(error => {
    if (error.keyword === 'additionalProperties' && error.instancePath === '' && explainUnknown !== undefined) {
      const name = String(error.params.additionalProperty)
      return explained(error, 'unknownParameter', `/${name}`, explainUnknown(name))
    }
    // Beside an enum's error, which lists what the value may be, the type's is left for that one sentence (ajv-issues.ts).
    if (error.keyword !== 'type' || errors.some(other => other.keyword === 'enum' && other.instancePath === error.instancePath)) return error
    const target = valueAt(values, properties, error.instancePath)
    if (target === undefined) return error
    if (error.params.type === 'integer') return integerError(error, target.raw, target.schema)
    if (error.params.type === 'number') return numberError(error, target.raw)
    if (error.params.type === 'boolean') return explained(error, 'booleanForm', error.instancePath, 'must be true or false')
    return error
  })
}

function strictStrings (schema: PartSchema, validate: Validate, isQuery: boolean): Validate {
  const properties = new Map(Object.entries(schema.properties ?? {}))
  const declared = declaredParameters([...properties.keys()])
  const explainUnknown = isQuery ? (name: string) => unknownParameterSentence(name, declared) : undefined
  const check: Validate = function validateStrings (data: unknown) {
    let repeated: AjvErrorLike[] | undefined
    const values = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>
    // The few parameters given, not the many declared (a collection declares each filterable field with every operator).
    for (const name of Object.keys(values)) {
      const property = properties.get(name)
      if (property === undefined) continue
      const raw = values[name]
      if (property.type === 'array') {
        // Comma-separated (`a,b`) or repeated (`x=a&x=b`): each item is converted on its own.
        const items = typeof raw === 'string' ? raw.split(',') : raw
        if (Array.isArray(items)) values[name] = items.map(item => typeof item === 'string' ? convertString(property.items?.type, item) : item)
      } else if (typeof raw === 'string') {
        values[name] = convertString(property.type, raw)
      } else if (Array.isArray(raw)) {
        (repeated ??= []).push(repeatedError(name, raw.length))
      }
    }
    const valid = validate(data)
    if (valid !== false && repeated === undefined) {
      check.errors = validate.errors
      return valid
    }
    const named = new Set((repeated ?? []).map(error => error.instancePath))
    const others = (validate.errors as AjvErrorLike[] | null | undefined ?? []).filter(error => !named.has(error.instancePath))
    check.errors = [...repeated ?? [], ...explainErrors(others, values, properties, explainUnknown)]
    return false
  }
  return check
}

interface RoutePart {
  schema: unknown
  method: string
  url: string
  httpPart?: string
}

type ExternalSchemas = Record<string, unknown>
type PoolOptions = { customOptions?: Record<string, unknown>, onCreate?: (ajv: ConfigurableAjv) => void } | undefined

type ConfigurableAjv = Parameters<typeof decimalMultipleOf>[0] & { addFormat: (name: string, format: { type: 'string', validate: (text: string) => boolean }) => unknown }

/**
 * Ajv's `date-time` accepts instants this service could not store exactly
 * (date-time.ts); after ajv-formats, it takes only those it can. And
 * `multipleOf` compares decimals, as a client writes them (decimal-multiple.ts).
 */
function configureAjv (ajv: ConfigurableAjv): void {
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime })
  decimalMultipleOf(ajv)
}
/** The pool's runtime shape (its published types describe an older signature). */
type CompilerPool = (externalSchemas: ExternalSchemas, options: PoolOptions) => (route: RoutePart) => Validate

type BuildValidator = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>

/** Validators compiled once per distinct part and schema (compiled-once.ts): many routes share a body, params or headers schema. */
const shared = compiledOnce<Validate>()

/**
 * Ajv in strict mode refuses keywords it does not know, which catches typos
 * (`minlength`); the annotations other tools read are known to it too:
 * OpenAPI's `example` and the definitions' own vendor extensions (`x-order`),
 * which the document carries. `keywords`: those the definitions use.
 */
const ajvOptionsWith = (keywords: readonly string[]): Record<string, unknown> => ({ ...AJV_OPTIONS, keywords: ['example', ...keywords] })

/** Compiles schemas as request bodies are compiled (for checks made at load); one Ajv refuses throws Ajv's error. */
export function compileLikeBodies (keywords: readonly string[]): (schema: unknown) => (data: unknown) => boolean {
  const compile = (AjvCompiler() as unknown as CompilerPool)({}, { customOptions: ajvOptionsWith(keywords), onCreate: configureAjv } as PoolOptions)
  return schema => compile({ schema, method: 'POST', url: '/', httpPart: 'body' }) as (data: unknown) => boolean
}

export function buildValidator (keywords: readonly string[] = []): BuildValidator {
  const pool = AjvCompiler() as unknown as CompilerPool
  const build = function buildStrictValidator (externalSchemas: ExternalSchemas, options: PoolOptions) {
    const ajvOptions = { ...options, customOptions: { ...options?.customOptions, ...ajvOptionsWith(keywords) }, onCreate: configureAjv }
    const compile = pool(externalSchemas, ajvOptions)
    const once = shared(externalSchemas, ajvOptions)
    return function compileRoutePart (route: RoutePart): Validate {
      return once(`${route.httpPart ?? ''} ${JSON.stringify(route.schema)}`, () => {
        const validate = compile(route)
        if (route.httpPart !== 'params' && route.httpPart !== 'querystring') return validate
        return strictStrings(route.schema as PartSchema, validate, route.httpPart === 'querystring')
      })
    }
  }
  return build as unknown as BuildValidator
}
