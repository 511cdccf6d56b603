/**
 * Opaque, tamper-evident keyset cursors: the position after the last item of
 * a page (its sort values and id) together with the sort it belongs to,
 * signed with HMAC-SHA256 so a client can neither forge nor alter one.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { BoundedMap } from '../bounded-map.js'

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

/**
 * How many signed cursors are remembered, each way. An HMAC costs more than a
 * cursor page's query: a client following a next link presents the cursor
 * this process just signed, and clients paging the same list are handed the
 * same ones.
 */
const CURSORS_REMEMBERED = 1000

export function cursorCodec (key: Buffer): CursorCodec {
  const sign = (payload: string): Buffer => createHmac('sha256', key).update(payload).digest()
  // payload → its signed cursor; signed cursor → its position. Keyed by the whole signed string, so a hit is exactly what was signed or verified.
  const signed = new BoundedMap<string, string>(CURSORS_REMEMBERED)
  const positions = new BoundedMap<string, CursorPosition>(CURSORS_REMEMBERED)
  const position = (sort: string, values: readonly unknown[]): CursorPosition => Object.freeze({ sort, values: Object.freeze([...values]) })

  function verified (token: string): CursorPosition | undefined {
    const [payload, signature, extra] = token.split('.')
    if (payload === undefined || signature === undefined || extra !== undefined) return undefined
    const expected = sign(payload)
    const given = Buffer.from(signature, 'base64url')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    try {
      const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { s?: unknown, v?: unknown }
      if (typeof parsed.s !== 'string' || !Array.isArray(parsed.v)) return undefined
      return position(parsed.s, parsed.v)
    } catch {
      return undefined
    }
  }

  return {
    encode ({ sort, values }) {
      const payload = Buffer.from(JSON.stringify({ s: sort, v: values })).toString('base64url')
      return signed.remember(payload, () => {
        const token = `${payload}.${sign(payload).toString('base64url')}`
        positions.set(token, position(sort, values))
        return token
      })
    },
    // A cursor that fails verification is not remembered, so forged ones cannot push out real ones.
    decode: token => positions.remember(token, () => verified(token))
  }
}
