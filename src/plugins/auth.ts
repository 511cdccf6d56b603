/**
 * Authentication and authorization for every versioned route: each must
 * declare the scope it needs (`config.scope`), or that it authenticates
 * clients itself (`config.auth: 'client'`, the token endpoint); a route with
 * neither fails at start-up instead of being silently public.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RequestPayload } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { createAuthenticator, hasScope, insufficientScope, type Principal } from '../auth/authenticate.js'
import { jwksKeys } from '../auth/jwks.js'
import { jwtVerifier } from '../auth/jwt.js'
import { externalPublicKey, serviceSecret } from '../auth/key-material.js'
import { serviceTokenSigner, type ServiceTokenSigner } from '../auth/service-token.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a caller needs for this route. */
    scope?: string
    /** `client`: the route authenticates OAuth clients itself. */
    auth?: 'client'
    /** A hidden helper route (405 / OPTIONS) that answers without credentials. */
    public?: boolean
  }
  interface FastifyInstance {
    /** Signs a token of the service's own (client credentials). */
    signServiceToken: ServiceTokenSigner
  }
  interface FastifyRequest {
    /** Who is calling; set on every route that needs a scope. */
    principal: Principal | null
  }
}

export interface AuthOptions {
  readonly config: Config
}

const VERSIONED = /^\/v[^/]+(\/|$)/

async function auth (app: FastifyInstance, { config }: AuthOptions): Promise<void> {
  const secret = await serviceSecret(config, app.log)
  const external = await externalPublicKey(config)
  const verifyJwt = jwtVerifier(app.log, {
    secret,
    ...(external === undefined ? {} : { external }),
    ...(config.jwtJwksUrl === '' ? {} : { jwks: jwksKeys(config.jwtJwksUrl) }),
    externalAlgorithms: config.jwtAlgorithms.split(','),
    issuer: config.jwtIssuer,
    audience: config.jwtAudience
  })
  const authenticator = createAuthenticator(app.store.credentials, verifyJwt)
  const deniedStatus = config.authzDeniedStatus === '403' ? 403 : 401

  app.decorateRequest('principal', null)
  const failures = new WeakMap<FastifyRequest, unknown>()
  app.decorate('signServiceToken', serviceTokenSigner(secret, config))

  app.addHook('onRoute', function requireDeclaredAccess (route) {
    const declared = route.config?.scope !== undefined || route.config?.auth === 'client' || route.config?.public === true
    if (VERSIONED.test(route.url) && !declared) {
      throw new Error(`route ${String(route.method)} ${route.url} declares neither config.scope nor config.auth: every /v1 route must say who may call it`)
    }
  })

  // Identification and enforcement are two steps so that rate limiting, between
  // them, counts a valid credential per credential and everything else per IP.
  app.addHook('onRequest', function identify (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    if (request.routeOptions.config?.scope === undefined) {
      done()
      return
    }
    authenticator.authenticate(request).then(principal => {
      request.principal = principal
      done()
    }, (error: unknown) => {
      failures.set(request, error)
      done()
    })
  })
  app.addHook('preParsing', function authorize (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) {
    const scope = request.routeOptions.config?.scope
    if (scope === undefined) {
      done(null, payload)
      return
    }
    const failure = failures.get(request)
    if (failure !== undefined) done(failure as Error)
    else if (request.principal === null || !hasScope(request.principal, scope)) done(insufficientScope(scope, deniedStatus))
    else done(null, payload)
  })
}

export default fp(auth, { name: 'resourcery-auth', dependencies: ['resourcery-store'] })
