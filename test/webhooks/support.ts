/**
 * What the webhook tests share: a local receiver, a subscription made through
 * the API, the attempts it records, a signature check, and a watch on the
 * process's warnings.
 */
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { body, post, type buildTestApp, type Json } from '../helper.js'

type App = Awaited<ReturnType<typeof buildTestApp>>

export interface Received { headers: IncomingHttpHeaders, body: string, at: number }

/** A local receiver answering each request with the next of `answers` (the last one repeats). */
export async function receiver (t: Test, answers: Array<{ status: number, headers?: Record<string, string> }> = [{ status: 204 }]) {
  const received: Received[] = []
  const waiting: Array<() => void> = []
  const server = createServer((request, response) => {
    let text = ''
    request.on('data', chunk => { text += String(chunk) })
    request.on('end', () => {
      const answer = answers[Math.min(received.length, answers.length - 1)]!
      received.push({ headers: request.headers, body: text, at: Date.now() })
      response.writeHead(answer.status, answer.headers).end()
      waiting.splice(0).forEach(wake => { wake() })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    async count (n: number, timeoutMs = 10_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs
      while (received.length < n && Date.now() < deadline) await new Promise<void>(resolve => { waiting.push(resolve); setTimeout(resolve, 100) })
      return received
    }
  }
}

/** Private targets allowed (the receivers are on loopback), and retries and polls quick enough for a test. */
export const ALLOW = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_POLL_MS: '50' }

/**
 * Every warning the process emits from now on: a file's last test checks that
 * its rounds of deliveries raised none. Each attempt listens for the stop while
 * in flight, and past Node's default of 10 listeners that warned of a leak.
 */
export function watchWarnings (): { check: (t: Test) => void } {
  const warnings: Error[] = []
  process.on('warning', warning => { warnings.push(warning) })
  return { check: t => { t.same(warnings.map(warning => `${warning.name}: ${warning.message}`), []) } }
}

/** A subscription made through the API, with its secret (shown only then). */
export async function subscribe (app: App, url: string, events: string[]): Promise<Json> {
  const created = await post(app, '/v1/webhooks', { url, events })
  if (created.statusCode !== 201) throw new Error(`subscribe: ${created.statusCode} ${created.body}`)
  return body(created)
}

/** The subscription's attempts, once at least `n` are recorded (a receiver sees a request before its attempt is stored). */
export async function attemptsOf (app: App, id: unknown, n: number): Promise<Json[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const attempts = body(await app.inject({ method: 'GET', url: `/v1/webhooks/${String(id)}/deliveries` })) as unknown as Json[]
    if (attempts.length >= n || Date.now() > deadline) return attempts
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

/** Whether a request's webhook-signature verifies with the subscription's secret (Standard Webhooks). */
export function verify (secret: string, received: Received): boolean {
  const id = received.headers['webhook-id'] as string
  const timestamp = received.headers['webhook-timestamp'] as string
  const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(`${id}.${timestamp}.${received.body}`).digest('base64')
  return (received.headers['webhook-signature'] as string).split(' ').includes(`v1,${expected}`)
}
