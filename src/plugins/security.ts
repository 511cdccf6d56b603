/**
 * Security headers on every response, with a policy for an API (nothing may
 * be framed, loaded or run from a JSON response) and a separate one for the
 * documentation pages, which need their own scripts and styles. HSTS only
 * where clients reach the service over HTTPS.
 *
 * The headers are helmet's (the engine of @fastify/helmet), computed once at
 * start-up: @fastify/helmet builds a new helmet middleware, CSP parsing
 * included, for every request, which the benchmark measured at about a third
 * of the cost of serving a record.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { headerPreset } from '../http/reply-headers.js'

export interface SecurityOptions {
  /** TLS here, or at a trusted proxy in front: send Strict-Transport-Security. */
  readonly https: boolean
}

export type HeaderSet = ReadonlyArray<readonly [string, string]>

/** The docs UI runs swagger-ui's bundled scripts from this origin; it may call the API it documents. */
const DOCS_POLICY = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

/** Runs helmet once against a response that only records what it is told to set. */
export function helmetHeaders (options: HelmetOptions): HeaderSet {
  const headers = new Map<string, string>()
  const recorder = {
    setHeader (name: string, value: string | number) { headers.set(name.toLowerCase(), String(value)) },
    removeHeader (name: string) { headers.delete(name.toLowerCase()) }
  }
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => {})
  return [...headers]
}

/** The headers of every API answer. */
export function apiSecurityHeaders ({ https }: SecurityOptions): HeaderSet {
  return helmetHeaders({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 31536000, includeSubDomains: true } : false
  })
}

async function security (app: FastifyInstance, options: SecurityOptions): Promise<void> {
  const api = apiSecurityHeaders(options)
  const docs: HeaderSet = api.map(([name, value]) => [name, name === 'content-security-policy' ? DOCS_POLICY : value])

  // The two sets name the same headers in the same order, so one preset serves both.
  const preset = headerPreset(api.map(([name]) => name))
  const apiValues = api.map(([, value]) => value)
  const docsValues = docs.map(([, value]) => value)
  app.addHook('onRequest', function securityHeaders (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    preset(reply, request.routeOptions.url?.startsWith('/docs') === true ? docsValues : apiValues)
    done()
  })
}

export default fp(security, { name: 'resourcery-security' })
