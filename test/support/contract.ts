/**
 * The generated OpenAPI document, held to the wire: every response a test
 * receives must be documented for its operation and status, its body valid
 * against the documented schema, the headers documented as required present
 * and every header it carries documented (but for framing and security
 * headers); every request the server accepts must be valid per the document.
 * The test helper runs this on every injected request, so the whole suite
 * checks it.
 */
import AjvModule, { type ValidateFunction } from 'ajv'
import formatsModule from 'ajv-formats'
import { decimalMultipleOf } from '../../src/http/decimal-multiple.js'

// Both are CommonJS modules whose class / function is their `default`.
const Ajv = AjvModule.default
const addFormats = formatsModule.default

type Json = Record<string, any>

interface Operation {
  readonly pattern: RegExp
  readonly path: string
  readonly operation: Json
}

/**
 * Headers an answer may carry without its operation documenting them: HTTP's
 * own framing and negotiation, the security headers every answer carries
 * (README, Transport and security), CORS, and `Allow` with a 405.
 */
const UNDOCUMENTED_HEADERS = new Set([
  'content-type', 'content-length', 'content-encoding', 'date', 'connection', 'keep-alive', 'transfer-encoding', 'vary', 'allow', 'pragma',
  'content-security-policy', 'cross-origin-opener-policy', 'cross-origin-resource-policy', 'origin-agent-cluster', 'referrer-policy',
  'strict-transport-security', 'x-content-type-options', 'x-dns-prefetch-control', 'x-download-options', 'x-frame-options',
  'x-permitted-cross-domain-policies', 'x-xss-protection'
])

/** A documented header's value, where its description gives exactly one in backticks and nothing else (Cache-Control). */
const exactValue = (description: unknown): string | undefined => /^`([^`]+)`$/.exec(String(description))?.[1]

export interface ContractChecker {
  /** Every way this exchange departs from the document (empty when it conforms). */
  check (exchange: { method: string, url: string, requestBody?: unknown, requestType?: string, status: number, headers: Record<string, unknown>, body: string }): string[]
}

/** A response header of `document`: described in place, or once in its components and referred to. */
export const resolveHeader = (document: Json, entry: Json): Json =>
  typeof entry.$ref === 'string' ? document.components.headers[entry.$ref.replace('#/components/headers/', '')] : entry

export interface CheckerOptions {
  /**
   * Documented-optional headers these exchanges must carry all the same: the
   * rate-limit headers, which the document lets go only while the Redis
   * counters are unreachable, a state no checked exchange is in.
   */
  readonly alsoRequired?: readonly string[]
}

export function contractChecker (document: Json, { alsoRequired = [] }: CheckerOptions = {}): ContractChecker {
  const expectedAnyway = new Set(alsoRequired.map(name => name.toLowerCase()))
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats(ajv)
  // JSON Schema's multipleOf is about the numbers as written (19.99 is a multiple of 0.01); Ajv's own divides doubles.
  decimalMultipleOf(ajv)
  ajv.addSchema({ $id: 'doc', components: document.components })
  const compiled = new Map<unknown, ValidateFunction>()
  const validator = (schema: unknown): ValidateFunction => {
    let validate = compiled.get(schema)
    if (validate === undefined) {
      // Component references point into the registered document.
      validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/')))
      compiled.set(schema, validate)
    }
    return validate!
  }
  const operations: Operation[] = []
  for (const [path, methods] of Object.entries(document.paths as Json)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`)
    for (const [method, operation] of Object.entries(methods as Json)) operations.push({ pattern, path: `${method.toUpperCase()} ${path}`, operation: { ...operation, method } })
  }
  const find = (method: string, path: string): Operation | undefined =>
    operations.find(candidate => candidate.operation.method === (method === 'HEAD' ? 'get' : method.toLowerCase()) && candidate.pattern.test(path))

  return {
    check ({ method, url, requestBody, requestType, status, headers, body }) {
      const path = url.split('?')[0]!
      const found = find(method, path)
      if (found === undefined || status === 405) return []
      const problems: string[] = []
      const where = `${found.path} → ${status}`
      const response = found.operation.responses?.[String(status)]
      if (response === undefined) return [`${where}: status not documented`]
      const type = String(headers['content-type'] ?? '').split(';')[0]!.trim()
      // A compressed body is the same document in another coding; the uncompressed twin is checked elsewhere.
      if (method !== 'HEAD' && body !== '' && status !== 304 && headers['content-encoding'] === undefined) {
        const media = response.content?.[type]
        if (media === undefined) problems.push(`${where}: media type ${type} not documented`)
        else if (!validator(media.schema)(JSON.parse(body))) problems.push(`${where}: body does not match: ${ajv.errorsText(validator(media.schema).errors)}`)
      }
      for (const [name, entry] of Object.entries(response.headers ?? {}) as Array<[string, Json]>) {
        const documented = resolveHeader(document, entry)
        const key = name.toLowerCase()
        // A header documented as required must come; an optional one may be absent (its description says when).
        if (headers[key] === undefined && (documented.required === true || expectedAnyway.has(key))) problems.push(`${where}: documented header ${name} missing`)
        const exact = exactValue(documented.description)
        if (exact !== undefined && headers[key] !== undefined && headers[key] !== exact) problems.push(`${where}: ${name} is ${String(headers[key])}, documented as \`${exact}\``)
      }
      const documented = new Set(Object.keys(response.headers ?? {}).map(name => name.toLowerCase()))
      for (const key of Object.keys(headers)) {
        if (!documented.has(key) && !UNDOCUMENTED_HEADERS.has(key) && !key.startsWith('access-control-')) problems.push(`${where}: header ${key} sent but not documented`)
      }
      if (status < 300 && requestBody !== undefined && found.operation.requestBody !== undefined) {
        const media = found.operation.requestBody.content?.[String(requestType ?? 'application/json').split(';')[0]!.trim()]
        const parsed = typeof requestBody === 'string' ? tryParse(requestBody) : requestBody
        if (media === undefined) problems.push(`${where}: accepted a request of an undocumented media type ${String(requestType)}`)
        else if (parsed !== undefined && !validator(media.schema)(parsed)) problems.push(`${where}: accepted a request the document calls invalid: ${ajv.errorsText(validator(media.schema).errors)}`)
      }
      return problems
    }
  }
}

function tryParse (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    // A form body (the token endpoint): compare its fields.
    return Object.fromEntries(new URLSearchParams(text))
  }
}
