/**
 * Adds a hook to one route from an onRoute hook, so a concern that only some
 * routes have (a body, an Idempotency-Key) costs nothing on the others.
 */
import type { RouteOptions } from 'fastify'

type RouteHookName = 'preValidation' | 'preHandler' | 'onSend'

export function addRouteHook<Name extends RouteHookName> (route: RouteOptions, name: Name, hook: NonNullable<RouteOptions[Name]> extends infer H ? H extends Array<infer Item> ? Item : H : never): void {
  const existing = route[name]
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
  route[name] = [...list, hook] as RouteOptions[Name]
}
