/**
 * Opaque, tamper-evident keyset cursors: the position after the last item of
 * a page (its sort values and id) together with the sort it belongs to,
 * signed with HMAC-SHA256 so a client can neither forge nor alter one.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export interface CursorPosition {
  /** The canonical sort the position was taken under. */
  readonly sort: string
  /** The sort keys' values of the last item, then its id. */
  readonly values: readonly unknown[]
}

export interface CursorCodec {
  encode (position: CursorPosition): string
  /** The position, or undefined when the cursor is malformed or its signature does not match. */
  decode (token: string): CursorPosition | undefined
}

export function cursorCodec (key: Buffer): CursorCodec {
  const sign = (payload: string): Buffer => createHmac('sha256', key).update(payload).digest()
  return {
    encode (position) {
      const payload = Buffer.from(JSON.stringify({ s: position.sort, v: position.values })).toString('base64url')
      return `${payload}.${sign(payload).toString('base64url')}`
    },
    decode (token) {
      const [payload, signature, extra] = token.split('.')
      if (payload === undefined || signature === undefined || extra !== undefined) return undefined
      const expected = sign(payload)
      const given = Buffer.from(signature, 'base64url')
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
      try {
        const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { s?: unknown, v?: unknown }
        if (typeof parsed.s !== 'string' || !Array.isArray(parsed.v)) return undefined
        return { sort: parsed.s, values: parsed.v }
      } catch {
        return undefined
      }
    }
  }
}
