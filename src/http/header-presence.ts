/**
 * Which documented response headers every answer carries, in the form
 * OpenAPI gives it: `required: true` on the header object. A route documents
 * a header as a schema (responses.ts: `header` / `optionalHeader`), and
 * @fastify/swagger copies that schema whole into the header object's
 * `schema`, where a `required: true` means nothing (JSON Schema's `required`
 * is a list of property names). This moves it out, so generated clients type
 * the headers they may count on as present, and the others as optional.
 */

interface HeaderObject { schema?: Record<string, unknown>, required?: boolean }
interface ResponseObject { headers?: Record<string, HeaderObject> }
interface OperationObject { responses?: Record<string, ResponseObject> }

/** `document` with each response header's presence lifted from its schema to the header object. */
export function withHeaderPresence<T extends { paths?: unknown }> (document: T): T {
  const paths = (document.paths ?? {}) as Record<string, Record<string, OperationObject>>
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          if (header.schema === undefined || !('required' in header.schema)) continue
          // @fastify/swagger builds these objects anew for each operation: changing them touches no route's schema.
          const { required, ...schema } = header.schema
          response.headers![name] = { ...header, schema, ...(required === true ? { required: true } : {}) }
        }
      }
    }
  }
  return document
}
