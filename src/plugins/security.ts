/**
 * Security headers from @fastify/helmet on every response, with a policy for
 * an API (nothing may be framed, loaded or run from a JSON response) and a
 * separate one for the documentation pages, which need their own scripts and
 * styles. HSTS only where clients reach the service over HTTPS.
 */
import helmet from '@fastify/helmet'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

export interface SecurityOptions {
  /** TLS here, or at a trusted proxy in front: send Strict-Transport-Security. */
  readonly https: boolean
}

/** The docs UI runs swagger-ui's bundled scripts from this origin; it may call the API it documents. */
const DOCS_POLICY = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

async function security (app: FastifyInstance, { https }: SecurityOptions): Promise<void> {
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 31536000, includeSubDomains: true } : false
  })
  app.addHook('onSend', async function docsPolicy (request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    if (request.routeOptions.url?.startsWith('/docs') === true) reply.header('content-security-policy', DOCS_POLICY)
    return payload
  })
}

export default fp(security, { name: 'resourcery-security' })
