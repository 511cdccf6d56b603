/**
 * Response serializers: fast-json-stringify through Fastify's own compiler,
 * compiled once per distinct schema (compiled-once.ts), writing members in
 * their declared order (declared-order.ts). A problem response is
 * declared on most statuses of every route, so the app has a few dozen
 * distinct serializers where Fastify asked for hundreds.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'
import { compiledOnce } from './compiled-once.js'
import { sharedWithoutRequired, withoutRequired } from './declared-order.js'

type Serialize = (data: unknown) => string
interface RouteResponse { schema: object, method: string, url: string, httpStatus: string, contentType?: string }
type SerializerFactory = (externalSchemas: Record<string, unknown>, options: unknown) => (route: RouteResponse) => Serialize

type BuildSerializer = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>

/**
 * Keywords that only document a response (the OpenAPI document reads them) and
 * do not change how it is written, so responses that differ only in them share
 * a serializer. Left out at the top level only, where they cannot name a property.
 */
const ANNOTATIONS = new Set(['description', 'headers', 'examples', 'example'])

function serializedShape (schema: object): string {
  return JSON.stringify(Object.fromEntries(Object.entries(schema).filter(([key]) => !ANNOTATIONS.has(key))))
}

const shared = compiledOnce<Serialize>()

export function buildSerializer (): BuildSerializer {
  const factory = (SerializerSelector as unknown as () => SerializerFactory)()
  const build = function buildSharedSerializers (externalSchemas: Record<string, unknown>, options: unknown) {
    // Without `required`, members are written in the order the schemas declare them (declared-order.ts);
    // the shared schemas are copied so only when something is compiled, not for every app that finds all compiled.
    let compile: ((route: RouteResponse) => Serialize) | undefined
    const once = shared(externalSchemas, options)
    return function compileResponse (route: RouteResponse): Serialize {
      return once(serializedShape(route.schema), () => {
        compile ??= factory(sharedWithoutRequired(externalSchemas), options)
        return compile({ ...route, schema: withoutRequired(route.schema) })
      })
    }
  }
  return build as unknown as BuildSerializer
}
