/**
 * The documented response headers, put in the form OpenAPI reads. A route
 * documents a header as a schema (responses.ts: `header`, `optionalHeader`,
 * `sharedHeader`), and @fastify/swagger copies that schema whole into the
 * header object's `schema`, marks included, where they mean nothing (JSON
 * Schema's `required` is a list of property names). Here:
 * - `required: true` moves to the header object, so generated clients type
 *   the headers they may count on as present, and the others as optional;
 * - so does `example`, the value the header's description is shown with;
 * - a `shared` header is described once, in `components.headers`, and each
 *   answer refers to it: X-Request-Id alone was written out on about 500
 *   answers. Only required ones are shared: a `$ref` header is required as far
 *   as openapi-typescript knows.
 */

interface HeaderObject { schema?: Record<string, unknown>, required?: boolean, description?: string, example?: unknown }
type HeaderEntry = HeaderObject | { $ref: string }
interface ResponseObject { headers?: Record<string, HeaderEntry> }
interface OperationObject { responses?: Record<string, ResponseObject> }
interface Components { headers?: Record<string, HeaderEntry> }

/** Every response's documented headers in `document`, as response and header name with its entry. */
function * responseHeaders (document: { paths?: unknown }): Generator<[ResponseObject, string, HeaderEntry]> {
  const paths = (document.paths ?? {}) as Record<string, Record<string, OperationObject>>
  for (const operation of Object.values(paths).flatMap(operations => Object.values(operations))) {
    for (const response of Object.values(operation.responses ?? {})) {
      for (const [name, entry] of Object.entries(response.headers ?? {})) yield [response, name, entry]
    }
  }
}

/** `document` with each response header's marks applied (it is changed in place and returned). */
export function documentHeaders<T extends { paths?: unknown, components?: unknown }> (document: T): T {
  const shared: Record<string, HeaderObject> = {}
  for (const [response, name, entry] of responseHeaders(document)) {
    if ('$ref' in entry || entry.schema === undefined) continue
    // @fastify/swagger builds these objects anew for each operation: changing them touches no route's schema.
    const { required, shared: isShared, example, ...schema } = entry.schema
    const header: HeaderObject = { ...entry, schema, ...(required === true ? { required: true } : {}), ...(example === undefined ? {} : { example }) }
    if (isShared !== true) {
      response.headers![name] = header
      continue
    }
    const known = shared[name]
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(header)) throw new Error(`two different response headers are both shared as ${name}`)
    shared[name] = header
    response.headers![name] = { $ref: `#/components/headers/${name}` }
  }
  if (Object.keys(shared).length > 0) {
    const components = (document.components ?? {}) as Components
    document.components = { ...components, headers: { ...components.headers, ...shared } }
  }
  return document
}
