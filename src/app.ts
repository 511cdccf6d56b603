/**
 * buildApp(): the Fastify instance for a configuration and a set of resource
 * definitions. The order in which plugins are registered lives here only.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { TSchema } from '@sinclair/typebox'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { parseScopeLimits, type Config } from './config.js'
import { adminRoutes } from './auth/admin-routes.js'
import { credentialSchemas } from './auth/credential-schemas.js'
import { scopesOf } from './auth/openapi-security.js'
import { tokenRoute, tokenSchemas } from './auth/token-route.js'
import { parseDuration } from './duration.js'
import compress from '@fastify/compress'
import cors from '@fastify/cors'
import { schemaEpoch } from './http/conditional.js'
import { COMPRESSION_THRESHOLD } from './http/content-coding.js'
import { decodeBodiesOnly, requestDecoding } from './http/request-coding.js'
import { corsOptions } from './http/cors.js'
import { loggerOptions, type LogDestination } from './http/log-output.js'
import { logUnanswered, OneLineLogController } from './http/request-log.js'
import { transportOptions, type TlsMaterial } from './http/transport.js'
import { MAX_PATH_PARAMETER_LENGTH } from './http/unroutable-path.js'
import { continueWhenBodyIsRead } from './http/expect-continue.js'
import { writeAnswersAtTurnEnd } from './http/turn-end-writes.js'
import { Problem, schemaError } from './http/problem.js'
import { buildSerializer } from './http/serializer.js'
import { buildValidator } from './http/validator.js'
import { CURRENT_VERSION, rewriteVersionedUrl } from './http/versions.js'
import auth from './plugins/auth.js'
import caching from './plugins/caching.js'
import documentedHeaders from './plugins/documented-headers.js'
import drain from './plugins/drain.js'
import { healthRoutes } from './plugins/health.js'
import idempotency from './plugins/idempotency.js'
import negotiation from './plugins/negotiation.js'
import jsonBody from './plugins/json-body.js'
import { trackRouteMethods } from './plugins/method-not-allowed.js'
import openapi from './plugins/openapi.js'
import pathHeaders from './plugins/path-headers.js'
import problems, { answerUnknownPaths, clientErrorHandler, routingErrorHandler } from './plugins/problems.js'
import unroutable, { routingRefusals } from './plugins/unroutable.js'
import rateLimits, { tokenEndpointLimit } from './plugins/rate-limit.js'
import requestLimits from './plugins/request-limits.js'
import security, { apiSecurityHeaders } from './plugins/security.js'
import storePlugin from './plugins/store.js'
import type { ResourceDefinition } from './resources/define.js'
import { representationSchema, resourceSchemas } from './resources/derive.js'
import { buildModel, type Model, type Resource } from './resources/model.js'
import { cursorCodec } from './resources/cursor.js'
import { resourcePrefix, resourceRoutes } from './resources/routes.js'
import { checkWithValidator, vendorKeywords } from './resources/validator-checks.js'
import { openStore } from './store/open.js'
import type { Store } from './store/store.js'
import { webhookDispatcher } from './webhooks/dispatcher.js'
import { webhookRoutes, webhookSchemas } from './webhooks/routes.js'

export interface AppOptions {
  readonly config: Config
  readonly definitions: readonly ResourceDefinition[]
  /** A store to use instead of opening DATABASE_URL (tests of failure modes). */
  readonly store?: Store
  /** Where log lines go instead of stdout (tests read them). */
  readonly logStream?: LogDestination
  /** Certificate and key when serving HTTPS (read by server.ts from TLS_CERT_FILE / TLS_KEY_FILE). */
  readonly tls?: TlsMaterial
}

/** The schemas of the engine's own routes, beside every resource's. */
const ENGINE_SCHEMAS = [...credentialSchemas, ...tokenSchemas, ...webhookSchemas]

/**
 * Every schema the app registers: each resource's and the engine's. Refuses
 * (DefinitionError) a resource whose schema name another already has, or a
 * field, default or example the validator refuses (validator-checks.ts), so
 * call it before the store opens:
 * `resourcery migrate` does too.
 */
export function appSchemas (model: Model, keywords: readonly string[] = vendorKeywords(model)): TSchema[] {
  checkWithValidator(model, keywords)
  return [...resourceSchemas(model, [Problem, ...ENGINE_SCHEMAS]), ...ENGINE_SCHEMAS]
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A client's X-Request-Id is kept when it is short and plain, so logs can be correlated across services. */
export function requestIdFor (request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
}

export async function buildApp ({ config, definitions, store: givenStore, logStream, tls }: AppOptions): Promise<FastifyInstance> {
  const model = buildModel(definitions)
  // The vendor extensions (x-…) the definitions use: validation must know them, as the checks below do.
  const keywords = vendorKeywords(model)
  // Checked before the store opens: a definition refused here must not have created its table.
  const schemas = appSchemas(model, keywords)
  const store = givenStore ?? await openStore(model, config)
  // TLS here, or at a trusted proxy in front.
  const https = tls !== undefined || config.trustProxy !== ''
  // The server's type depends on TLS / HTTP/2; the app is used through the common interface.
  const securityHeaders = apiSecurityHeaders({ https })
  const app = Fastify({
    ...transportOptions(config, tls),
    logger: loggerOptions(config.logLevel, logStream),
    genReqId: requestIdFor,
    logController: new OneLineLogController(),
    bodyLimit: config.bodyLimit,
    // The drain plugin answers requests that arrive while closing, with a problem.
    return503OnClosing: false,
    rewriteUrl: routingRefusals(rewriteVersionedUrl),
    clientErrorHandler: clientErrorHandler(securityHeaders),
    frameworkErrors: routingErrorHandler(securityHeaders),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    schemaErrorFormatter: schemaError,
    schemaController: { compilersFactory: { buildValidator: buildValidator(keywords), buildSerializer: buildSerializer() } }
  } as FastifyServerOptions) as unknown as FastifyInstance
  app.server.maxConnections = config.maxConnections
  continueWhenBodyIsRead(app.server)
  writeAnswersAtTurnEnd(app.server)
  try {
    const { applied } = await store.migrate()
    if (applied.length > 0) app.log.info({ applied }, 'database schema updated')
  } catch (error) {
    await store.close()
    throw error
  }

  app.addHook('onRequest', function echoRequestId (request, reply, done) {
    reply.header('x-request-id', request.id)
    done()
  })
  logUnanswered(app)
  const methods = trackRouteMethods(app)
  await app.register(pathHeaders)
  await app.register(problems)
  await app.register(security, { https })
  await app.register(drain)
  if (config.corsOrigins !== '') await app.register(cors, corsOptions(config.corsOrigins))
  await app.register(negotiation)
  await app.register(requestLimits)
  await app.register(jsonBody)
  await app.register(storePlugin, { store })
  await app.register(auth, { config })
  const windowSeconds = parseDuration(config.rateLimitWindow)!
  await app.register(rateLimits, {
    max: config.rateLimitMax, windowSeconds, scopeLimits: parseScopeLimits(config.rateLimitScopes), tokenMax: config.tokenRateLimitMax, redisUrl: config.redisUrl
  })
  answerUnknownPaths(app, () => methods.serverAllow())
  await app.register(unroutable, { serverAllow: () => methods.serverAllow() })
  await app.register(caching)
  await app.register(documentedHeaders)
  // Before the plugin's own onRoute hook, which reads what this one sets.
  app.addHook('onRoute', decodeBodiesOnly)
  // After caching, so list ETags are computed on the uncompressed body.
  await app.register(compress, { global: true, threshold: COMPRESSION_THRESHOLD, ...requestDecoding })
  await app.register(idempotency)
  await app.register(openapi, { resources: model.resources, publicUrl: config.publicUrl, version: CURRENT_VERSION })
  for (const schema of schemas) app.addSchema(schema)
  await app.register(healthRoutes)
  await app.register(adminRoutes, { prefix: `/v${CURRENT_VERSION}`, knownScopes: Object.keys(scopesOf(model.resources)), maxLimit: config.maxPageLimit })
  const allowPrivate = config.webhookAllowPrivate === '1'
  await app.register(webhookRoutes, { prefix: `/v${CURRENT_VERSION}`, collections: model.resources.map(resource => resource.collection), allowPrivate, lookupTimeoutMs: config.webhookTimeoutMs, maxLimit: config.maxPageLimit })
  const dispatcher = webhookDispatcher({
    store: store.webhooks, model, allowPrivate, timeoutMs: config.webhookTimeoutMs, retryBaseMs: config.webhookRetryBaseMs, pollMs: config.webhookPollMs, retentionMs: parseDuration(config.webhookRetention)! * 1000, log: app.log
  })
  store.onEventsEnqueued(() => { dispatcher.nudge() })
  app.addHook('onReady', async () => { dispatcher.start() })
  app.addHook('onClose', async () => { await dispatcher.stop() })
  await app.register(tokenRoute, {
    prefix: `/v${CURRENT_VERSION}/auth`, ttlSeconds: parseDuration(config.tokenTtl)!, rateLimit: tokenEndpointLimit(config.tokenRateLimitMax, windowSeconds)
  })
  const cursors = cursorCodec(await store.secret('cursor-signing'))
  const epochs = new Map(model.resources.map(resource => [resource, schemaEpoch(representationSchema(resource))]))
  const epochOf = (resource: Resource): string => epochs.get(resource)!
  for (const resource of model.resources) {
    await app.register(resourceRoutes, { prefix: resourcePrefix(resource), model, resource, maxLimit: config.maxPageLimit, cursors, epochOf })
  }
  methods.registerFallbacks(app)
  return app
}
