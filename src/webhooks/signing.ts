/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret
 * is `whsec_` + base64 of random bytes; each request carries `webhook-id`,
 * `webhook-timestamp` (seconds) and `webhook-signature: v1,<base64 HMAC-SHA256
 * of "{id}.{timestamp}.{body}">`.
 */
import { createHmac, randomBytes } from 'node:crypto'

const PREFIX = 'whsec_'

export function newSigningSecret (): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`
}

export function signatureHeaders (secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64')
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` }
}
