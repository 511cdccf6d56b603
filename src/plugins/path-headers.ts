/**
 * Headers every answer on a path carries, whichever route of it answers: a
 * deprecated resource's `Deprecation` and `Sunset`, on its operations and on
 * the 405 / OPTIONS fallback of its paths alike. A route names them in
 * `config.pathHeaders`; only such routes get the hook.
 */
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { addRouteHook } from '../http/route-hooks.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Headers every answer on this route's path carries (a deprecated resource's `Deprecation` and `Sunset`). */
    pathHeaders?: Readonly<Record<string, string>>
  }
}

function announce (headers: Readonly<Record<string, string>>): onSendHookHandler {
  return function pathHeaders (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
    for (const [header, value] of Object.entries(headers)) {
      // A list's Link already holds its pages (RFC 8288 allows one field with many links): a deprecation link joins them.
      const existing = header === 'link' ? reply.getHeader('link') : undefined
      reply.header(header, existing === undefined ? value : `${String(existing)}, ${value}`)
    }
    done(null, payload)
  } as onSendHookHandler
}

export default fp(async function pathHeaders (app) {
  app.addHook('onRoute', function announcePathHeaders (route) {
    const headers = route.config?.pathHeaders
    if (headers !== undefined) addRouteHook(route, 'onSend', announce(headers))
  })
}, { name: 'resourcery-path-headers' })
