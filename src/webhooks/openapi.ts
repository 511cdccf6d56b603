/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, describing
 * the signed request the service sends, so receivers can generate types and
 * check signatures from the same document as the API.
 */
import { schemaIds } from '../resources/derive.js'
import type { Resource } from '../resources/model.js'
import { EVENT_KINDS } from './events.js'

const header = (name: string, description: string, example: string): Record<string, unknown> => ({ name, in: 'header', required: true, description, schema: { type: 'string' }, example })

const SIGNATURE_HEADERS = [
  header('webhook-id', 'The event id; the same on every retry of this event: deduplicate on it.', 'msg_2b1f6c3e9a4d4f0e8a7b5c6d1e2f3a4b'),
  header('webhook-timestamp', 'Seconds since the epoch when this attempt was signed; refuse old ones to stop replays.', '1768469400'),
  header('webhook-signature', '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the base64 part of the subscription\'s `whsec_` secret (Standard Webhooks).', 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=')
]

/** Deleted events also come from a parent's cascading delete: say which. */
function cascadeNote (resource: Resource, resources: readonly Resource[]): string {
  const parents = resource.parents.filter(link => link.onDelete === 'cascade')
    .map(link => resources.find(candidate => candidate.collection === link.parent)?.singular ?? link.parent)
  return parents.length === 0 ? '' : ` (also for each ${resource.singular} removed by deleting its ${parents.join(' or ')})`
}

export function webhookDocumentation (resources: readonly Resource[]): Record<string, unknown> {
  const entries: Record<string, unknown> = {}
  for (const resource of resources) {
    for (const kind of EVENT_KINDS) {
      const type = `${resource.collection}.${kind}`
      const data = kind === 'deleted'
        ? { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'], additionalProperties: false }
        : { $ref: `#/components/schemas/${schemaIds(resource).representation}` }
      entries[type] = {
        post: {
          tags: ['webhooks'],
          operationId: `${resource.collection}${kind[0]!.toUpperCase()}${kind.slice(1)}Event`,
          summary: `A ${resource.singular} was ${kind}`,
          description: `Sent to every active subscription whose events match \`${type}\` after the write commits${kind === 'deleted' ? cascadeNote(resource, resources) : ''}; retried until a 2xx for 25 h. \`410 Gone\` disables the subscription.`,
          parameters: SIGNATURE_HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id', 'type', 'timestamp', 'data'],
                  additionalProperties: false,
                  properties: {
                    id: { type: 'string', description: 'The event id, as in webhook-id.' },
                    type: { type: 'string', const: type },
                    timestamp: { type: 'string', format: 'date-time', description: 'When the write committed.' },
                    data
                  }
                }
              }
            }
          },
          responses: {
            200: { description: 'Received (any 2xx). Anything else, a timeout or a redirect is retried; `Retry-After` is honoured.' },
            410: { description: 'Gone: the subscription is disabled and nothing more is sent to it.' }
          }
        }
      }
    }
  }
  return entries
}
