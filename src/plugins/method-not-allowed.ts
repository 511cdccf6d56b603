/**
 * Fastify answers 404 for a known path with an unknown method. This records
 * the methods of every path as routes are added and, once they all are,
 * registers one hidden route per path that answers the rest: 405 with `Allow`
 * (before the body is read), and OPTIONS with 204 + `Allow`.
 */
import { METHODS as NODE_METHODS } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { MethodNotAllowed } from '../errors.js'

/** The methods a path may have, in the order `Allow` lists them. */
const SERVED = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
/**
 * Every method Node's parser accepts (CONNECT, a tunnel, is refused before
 * routing: unroutable.ts): Fastify routes only the common ones and TRACE
 * unless told, so TRACE aside, any other (PROPFIND, SEARCH…) on a known path
 * was a 404 instead of a 405.
 */
const REFUSED = NODE_METHODS.filter(method => method !== 'CONNECT' && !SERVED.includes(method))
/** Marks a route that is no path of the API (a fallback here, the refusal route): its methods are not tracked. */
const untrackedMarker = Symbol('resourcery.untrackedRoute')

declare module 'fastify' {
  interface FastifyContextConfig {
    [untrackedMarker]?: true
  }
}

/** `config` for a route whose methods say nothing of what the service serves: it gets no 405s and no place in `OPTIONS *`. */
export function untracked<Config extends object> (config: Config): Config & { [untrackedMarker]: true } {
  return { ...config, [untrackedMarker]: true }
}

export interface MethodTracker {
  /** Registers the 405 / OPTIONS routes; call after every other route is registered. */
  registerFallbacks (app: FastifyInstance): void
  /** `Allow` for `OPTIONS *`, which asks about the server as a whole (RFC 9110 §9.3.7): the methods of every path. */
  serverAllow (): string
}

export function trackRouteMethods (app: FastifyInstance): MethodTracker {
  for (const method of REFUSED) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method)
  const methodsByUrl = new Map<string, Set<string>>()
  const headersByUrl = new Map<string, Readonly<Record<string, string>>>()
  app.addHook('onRoute', function recordMethods (route) {
    if (route.config?.[untrackedMarker] === true || route.url.includes('*')) return
    const methods = methodsByUrl.get(route.url) ?? new Set<string>()
    for (const method of [route.method].flat()) methods.add(method)
    if (methods.has('GET')) methods.add('HEAD')
    methodsByUrl.set(route.url, methods)
    if (route.config?.pathHeaders !== undefined) headersByUrl.set(route.url, route.config.pathHeaders)
  })

  const allowOf = (methods: ReadonlySet<string>): string => SERVED.filter(method => methods.has(method) || method === 'OPTIONS').join(', ')
  // Known once every route is: registerFallbacks runs last, before any request can ask.
  let serverWide = allowOf(new Set())
  return {
    serverAllow (): string {
      return serverWide
    },
    registerFallbacks (target: FastifyInstance): void {
      serverWide = allowOf(new Set([...methodsByUrl.values()].flatMap(methods => [...methods])))
      for (const [url, methods] of methodsByUrl) {
        const allow = allowOf(methods)
        const missing = [...SERVED, ...REFUSED].filter(method => !methods.has(method))
        if (missing.length === 0) continue
        target.route({
          method: missing,
          url,
          schema: { hide: true },
          // The path's own headers (path-headers.ts), on its 405 and OPTIONS answers too.
          config: untracked({ public: true, pathHeaders: headersByUrl.get(url) }),
          // Before the body is parsed: a method the path lacks is its answer, whatever the body (a 415 would
          // say to send JSON, which would then be refused too), and Fastify's own check that a QUERY has
          // a Content-Type runs with the parsing.
          preParsing: function refuseMethod (request, reply, payload, done) {
            reply.header('allow', allow)
            if (request.method === 'OPTIONS') done(null, payload)
            else done(new MethodNotAllowed(`${request.method} is not allowed here; allowed: ${allow}`))
          },
          handler: async function listMethods (_request, reply) {
            return await reply.code(204).send()
          }
        })
      }
    }
  }
}
