/**
 * Adds a hook to one route from an onRoute hook, so a concern that only some
 * routes have (a body, an Idempotency-Key) costs nothing on the others.
 */
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'

type RouteHookName = 'onRequest' | 'preValidation' | 'preHandler' | 'onSend'
type HookOf<Name extends RouteHookName> = NonNullable<RouteOptions[Name]> extends infer H ? H extends Array<infer Item> ? Item : H : never

/**
 * A preHandler for a route that attaches its schema errors (its handler adds
 * issues of its own to them) runs, as on every other route, only for a request
 * its schema accepted: the handler answers the others with their 400.
 */
function onlyWhenValid (hook: HookOf<'preHandler'>): HookOf<'preHandler'> {
  const run = hook as unknown as (this: unknown, request: FastifyRequest, reply: FastifyReply, done?: () => void) => unknown
  // Fastify tells a callback hook from an async one by its arity, so the wrapper keeps it.
  const wrapped = run.length >= 3
    ? function (this: unknown, request: FastifyRequest, reply: FastifyReply, done: () => void): unknown { return request.validationError === undefined ? run.call(this, request, reply, done) : done() }
    : async function (this: unknown, request: FastifyRequest, reply: FastifyReply): Promise<unknown> { return request.validationError === undefined ? await run.call(this, request, reply) : undefined }
  return wrapped as unknown as HookOf<'preHandler'>
}

export function addRouteHook<Name extends RouteHookName> (route: RouteOptions, name: Name, hook: HookOf<Name>): void {
  const existing = route[name]
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
  const added = name === 'preHandler' && route.attachValidation === true ? onlyWhenValid(hook as HookOf<'preHandler'>) : hook
  route[name] = [...list, added] as RouteOptions[Name]
}
