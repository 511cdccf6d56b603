/**
 * /v1/webhooks: admins subscribe a URL to events; the signing secret is in
 * the create response only. /v1/webhooks/{id}/deliveries shows every attempt.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { adminListHeaders, sendAdminCreated, sendAdminList } from '../auth/admin-conditional.js'
import { ADMIN_FORBIDDEN, adminCollectionRoutes, adminConfig, adminCreateOperation, adminOperation, adminWriteConfig, checkBeforeAdminCreate, noSuchItem, NullableTimestamp, Timestamp } from '../auth/admin-collection.js'
import { DeliveryNotResendable, ResourceNotFound } from '../errors.js'
import { bodyMembers, refuseWithAll } from '../http/attached-validation.js'
import { ifMatchWithoutRepresentation, noRepresentationToMatch } from '../http/conditional.js'
import { linkBase } from '../http/instance.js'
import { Id, IdParams } from '../resources/derive.js'
import { stringEnum } from '../resources/model.js'
import { EXAMPLE_ID } from '../resources/header-examples.js'
import { EXAMPLE_EVENT_ID, type ProblemDoc } from '../resources/problem-examples.js'
import { itemPath, link } from '../resources/links.js'
import { ADMIN_LIST_READ, header, jsonResponse, listProblems, NO_REPRESENTATION_CONDITIONS, noRepresentationProblem, notModified, problemResponses } from '../resources/responses.js'
import type { AttemptRecord, Subscription } from '../store/webhook-store.js'
import { patternIssues } from './events.js'
import { newSigningSecret } from './signing.js'
import { resolveTarget, TargetRefused, TargetUnresolved } from './targets.js'

/** What the document shows: a subscription as listed, and as created (the only time its secret is shown). */
const WEBHOOK_EXAMPLE = { id: EXAMPLE_ID, url: 'https://hooks.example.com/resourcery', events: ['projects.created', 'tasks.*'], createdAt: '2026-11-02T09:30:00.000Z', active: true, disabledAt: null, disabledReason: null }

const ATTEMPT_EXAMPLE = {
  id: 12, eventId: 'msg_2b5f0c9e8d7a4b1c9e3f6a5d4c3b2a19', eventType: 'tasks.updated', attempt: 2, attemptedAt: '2026-11-20T17:42:15.000Z', durationMs: 84, responseStatus: 503, error: null, outcome: 'retrying', nextAttemptAt: '2026-11-20T17:42:35.000Z'
}

export const Webhook = Type.Object({
  id: Id,
  url: Type.String({ format: 'uri' }),
  events: Type.Array(Type.String()),
  createdAt: Timestamp,
  active: Type.Boolean({ description: 'False once disabled (the receiver answered 410 Gone).' }),
  disabledAt: NullableTimestamp,
  disabledReason: Type.Union([Type.String(), Type.Null()])
}, { $id: 'Webhook', additionalProperties: false, description: 'A webhook subscription, without its signing secret.', examples: [WEBHOOK_EXAMPLE] })

export const WebhookCreate = Type.Object({
  url: Type.String({ format: 'uri', minLength: 1, maxLength: 2000, pattern: '^https?://', description: 'Where events are POSTed. Loopback, private and link-local addresses are refused unless WEBHOOK_ALLOW_PRIVATE=1.' }),
  events: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
    minItems: 1, maxItems: 100, uniqueItems: true, description: '`{collection}.{created|updated|deleted}`; `*` stands for either part (`tasks.*`, `*.deleted`, `*`).'
  })
}, { $id: 'WebhookCreate', additionalProperties: false, examples: [{ url: 'https://hooks.example.com/resourcery', events: ['projects.created', 'tasks.*'] }] })

export const WebhookCreated = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'The Standard Webhooks signing secret (`whsec_…`): shown only in this response.' })
}, { $id: 'WebhookCreated', additionalProperties: false, examples: [{ ...WEBHOOK_EXAMPLE, secret: 'whsec_cmVzb3VyY2VyeSBleGFtcGxlIHdlYmhvb2sga2V5ISE=' }] })

export const WebhookAttempt = Type.Object({
  id: Id,
  eventId: Type.String({ description: 'The event\'s id, also sent as `webhook-id`; the same on every attempt.' }),
  eventType: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  attemptedAt: Timestamp,
  durationMs: Type.Integer({ minimum: 0 }),
  responseStatus: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  outcome: stringEnum(['succeeded', 'retrying', 'failed']),
  nextAttemptAt: NullableTimestamp
}, {
  $id: 'WebhookAttempt',
  additionalProperties: false,
  description: 'One attempt at delivering an event.',
  examples: [ATTEMPT_EXAMPLE]
})

export const webhookSchemas = [Webhook, WebhookCreate, WebhookCreated, WebhookAttempt]

function webhookView (subscription: Subscription): Static<typeof Webhook> {
  const { id, url, events, createdAt } = subscription
  return { id, url, events: [...events], createdAt, active: subscription.disabledAt === undefined, disabledAt: subscription.disabledAt ?? null, disabledReason: subscription.disabledReason ?? null }
}

function attemptView (attempt: AttemptRecord): Static<typeof WebhookAttempt> {
  const { id, eventId, eventType, attempt: number, attemptedAt, durationMs, outcome } = attempt
  return { id, eventId, eventType, attempt: number, attemptedAt, durationMs, outcome, responseStatus: attempt.responseStatus ?? null, error: attempt.error ?? null, nextAttemptAt: attempt.nextAttemptAt ?? null }
}

export interface WebhookRoutesOptions {
  readonly collections: readonly string[]
  readonly allowPrivate: boolean
  /** The longest wait for a target's name to resolve (WEBHOOK_TIMEOUT_MS), after which it is subscribed as not resolving yet. */
  readonly lookupTimeoutMs: number
  /** The most items a page of a list may ask for (MAX_PAGE_LIMIT). */
  readonly maxLimit: number
}

const SUBSCRIPTION = 'webhook subscription'

/** A page of attempts is reached by `before` (keyset: new attempts do not shift the older pages), so it links to the first page and the next, not to a last. */
const DEFAULT_DELIVERIES_LIMIT = 100

/** A page of attempts' links, where `path` asks for the first page and `last` is the oldest attempt of this one, when older ones follow. */
const deliveriesLinks = (path: string, last: number | undefined): string =>
  [link(path, 'first'), ...(last === undefined ? [] : [link(`${path}&before=${last}`, 'next')])].join(', ')

/** A page of attempts, shown as the first page of subscription 7's, which older attempts follow. */
const DELIVERIES_LINKS_EXAMPLE = deliveriesLinks(`${itemPath('webhooks', EXAMPLE_ID)}/deliveries?limit=${DEFAULT_DELIVERIES_LIMIT}`, ATTEMPT_EXAMPLE.id)
const DELIVERIES_HEADERS = {
  ...adminListHeaders({ items: [ATTEMPT_EXAMPLE], headers: { link: DELIVERIES_LINKS_EXAMPLE } }),
  Link: header('string', 'RFC 8288 links: `first`, the newest attempts, and `next`, the older ones after this page, while there are any.', DELIVERIES_LINKS_EXAMPLE)
}

const noDelivery = (id: number, eventId: string): Error => new ResourceNotFound(`webhook subscription ${id} has no delivery of event ${eventId}`)
const subscriptionDisabled = (id: number): Error =>
  new DeliveryNotResendable(`webhook subscription ${id} is disabled (its receiver answered 410 Gone); subscribe again to receive events`)
const alreadyScheduled = (eventId: string, nextAttemptAt: string | undefined): Error =>
  new DeliveryNotResendable(`the delivery of ${eventId} is already scheduled (next attempt at ${nextAttemptAt ?? 'once due'})`)

const RESEND_NOT_FOUND: ProblemDoc = { status: 404, error: noDelivery(EXAMPLE_ID, EXAMPLE_EVENT_ID), description: 'No such subscription, or it has no delivery of that event.' }
const RESEND_CONFLICT: ProblemDoc = {
  status: 409,
  error: alreadyScheduled(EXAMPLE_EVENT_ID, '2026-11-25T10:00:00.000Z'),
  description: 'The delivery is still pending (it is already scheduled), or the subscription is disabled.'
}
const NOT_RESENT = 'nothing was scheduled'
const RESEND_PRECONDITION = noRepresentationProblem(`${itemPath('webhooks', EXAMPLE_ID)}/deliveries/${EXAMPLE_EVENT_ID}/resend`, NOT_RESENT)

export async function webhookRoutes (app: FastifyInstance, { collections, allowPrivate, lookupTimeoutMs, maxLimit }: WebhookRoutesOptions): Promise<void> {
  const store = app.store.webhooks

  app.post('/webhooks', {
    config: adminWriteConfig,
    // The handler's own checks (event names, the target's address) join the schema's issues in one 400.
    attachValidation: true,
    schema: adminCreateOperation('webhooks', 'createWebhook', 'Subscribe to events', { path: '/webhooks', body: 'WebhookCreate', created: 'WebhookCreated', shown: 'The subscription and its signing secret, shown only now.', example: WEBHOOK_EXAMPLE })
  }, async function createWebhook (request, reply) {
    const { url, events } = bodyMembers(request)
    // A pattern that is not a string is the schema's to name: read as `*`, it keeps the others' indices and adds nothing.
    const issues = Array.isArray(events) ? patternIssues(events.map((event: unknown) => typeof event === 'string' ? event : '*'), collections) : []
    if (typeof url === 'string') {
      // The schema's `uri` format lets pass what WHATWG URL refuses, such as a port above 65535.
      const target = URL.canParse(url) ? new URL(url) : undefined
      if (target === undefined) {
        issues.unshift({ in: 'body', pointer: '/url', detail: 'is not a URL this service can send to' })
      } else if (target.protocol === 'http:' || target.protocol === 'https:') {
        // Any other scheme the schema has refused: only an address events could go to is looked up.
        try {
          await resolveTarget(target, { allowPrivate, timeoutMs: lookupTimeoutMs })
        } catch (error) {
          if (!(error instanceof TargetRefused)) throw error
          if (error instanceof TargetUnresolved) request.log.warn({ host: target.hostname, reason: error.message }, 'webhook target does not resolve yet; every delivery checks it again')
          else issues.unshift({ in: 'body', pointer: '/url', detail: error.message })
        }
      }
    }
    refuseWithAll(request, 'body', issues)
    await checkBeforeAdminCreate(request, store.subscriptions, webhookView)
    const body = request.body as Static<typeof WebhookCreate>
    const subscription = await store.create({ url: body.url, events: body.events, secret: newSigningSecret() })
    return await sendAdminCreated(reply, `/v1/webhooks/${subscription.id}`, webhookView(subscription), { secret: subscription.secret })
  })

  adminCollectionRoutes(app, {
    path: '/webhooks',
    tag: 'webhooks',
    noun: SUBSCRIPTION,
    plural: 'Webhooks',
    singular: 'Webhook',
    items: store.subscriptions,
    view: webhookView,
    example: WEBHOOK_EXAMPLE,
    maxLimit,
    revoke: async id => await store.remove(id),
    revoked: 'Deleted: no further events are sent to it, pending retries included.'
  })

  app.get('/webhooks/:id/deliveries', {
    config: adminConfig,
    schema: adminOperation('webhooks', 'listWebhookDeliveries', 'List delivery attempts of a webhook subscription', {
      params: IdParams,
      querystring: Type.Object({
        limit: Type.Integer({ minimum: 1, maximum: 1000, default: DEFAULT_DELIVERIES_LIMIT, description: 'How many attempts a page holds.' }),
        before: Type.Optional({ ...Id, description: 'Only attempts older than the one with this `id`: the `next` link sets it to the last attempt of the page.' })
      }, { additionalProperties: false }),
      headers: ADMIN_LIST_READ,
      response: { 200: jsonResponse('Attempts, newest first.', Type.Array(Type.Ref('WebhookAttempt')), DELIVERIES_HEADERS), ...notModified(DELIVERIES_HEADERS), ...listProblems([400, 401, ADMIN_FORBIDDEN, { status: 404, error: noSuchItem(SUBSCRIPTION, EXAMPLE_ID) }, 429]) }
    })
  }, async function listDeliveries (request, reply) {
    const { id } = request.params as { id: number }
    const { limit, before } = request.query as { limit: number, before?: number }
    const path = `${itemPath('webhooks', id)}/deliveries?limit=${limit}`
    return await sendAdminList(request, reply, async () => {
      if (await store.subscriptions.get(id) === undefined) throw noSuchItem(SUBSCRIPTION, id)
      // One more than the page, to know whether a next page exists.
      const attempts = await store.attempts(id, limit + 1, before)
      const page = attempts.slice(0, limit)
      return { items: page.map(attemptView), headers: { link: deliveriesLinks(path, attempts.length > limit ? page.at(-1)!.id : undefined) } }
    })
  })

  app.post('/webhooks/:id/deliveries/:eventId/resend', {
    config: adminWriteConfig,
    schema: adminOperation('webhooks', 'resendWebhookDelivery', 'Send an event to a subscription again', {
      description: 'Schedules a finished delivery (succeeded, or failed after its retries) of the event again, with the same `webhook-id` and body, freshly signed. It is sent within `WEBHOOK_POLL_MS`; if it fails and the event is more than 25 h old, it is not retried.',
      params: Type.Object({ ...IdParams.properties, eventId: Type.String({ pattern: '^msg_[0-9a-f]{32}$', description: 'The event\'s id, as `eventId` in the delivery attempts.', examples: [EXAMPLE_EVENT_ID] }) }, { additionalProperties: false }),
      headers: NO_REPRESENTATION_CONDITIONS,
      response: { 202: { description: 'Scheduled; the attempt will appear in the deliveries.', type: 'null' }, ...problemResponses([400, 401, ADMIN_FORBIDDEN, RESEND_NOT_FOUND, RESEND_CONFLICT, RESEND_PRECONDITION, 429]) }
    })
  }, async function resendDelivery (request, reply) {
    const { id, eventId } = request.params as { id: number, eventId: string }
    // If-Match cannot hold here, but a missing or unresendable delivery is told first (RFC 9110 §13.2.1).
    const outcome = await store.resend(id, eventId, new Date().toISOString(), ifMatchWithoutRepresentation(request.headers))
    if (!outcome.scheduled) {
      if (outcome.reason === 'withheld') throw noRepresentationToMatch(linkBase(request.url), NOT_RESENT)
      if (outcome.reason === 'missing') throw noDelivery(id, eventId)
      throw outcome.reason === 'disabled' ? subscriptionDisabled(id) : alreadyScheduled(eventId, outcome.nextAttemptAt)
    }
    return await reply.code(202).send()
  })
}
