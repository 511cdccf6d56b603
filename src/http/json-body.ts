/**
 * The only request body format: JSON (and JSON Merge Patch), parsed strictly.
 * Bytes that are not UTF-8, nesting deeper than any schema allows, repeated
 * keys, prototype keys and strings a database cannot store exactly (NUL, lone surrogates) are
 * refused here with a 400 instead of being changed or crashing a later layer.
 */
import secureJson from 'secure-json-parse'
import { invalid, MalformedBody } from '../errors.js'

export const JSON_MEDIA_TYPE = 'application/json'
/** JSON's Content-Type as the service sends it, and as Fastify labels the JSON it serialises itself. */
export const JSON_CONTENT_TYPE = `${JSON_MEDIA_TYPE}; charset=utf-8`
export const MERGE_PATCH_MEDIA_TYPE = 'application/merge-patch+json'

/** Deeper than any resource schema nests; stops stack-hungry payloads before they are walked. */
export const MAX_JSON_DEPTH = 32

const utf8 = new TextDecoder('utf-8', { fatal: true })

export interface JsonShape {
  /** True when objects and arrays nest deeper than the limit. */
  readonly tooDeep: boolean
  /** A key that appears twice in one object (as written), if any. */
  readonly duplicateKey?: string
}

/**
 * One pass over the text, without recursion: nesting depth, and keys repeated
 * within one object (parsers disagree on which of them wins, so none does).
 */
export function scanJson (text: string, depthLimit: number): JsonShape {
  const frames: Array<{ keys: Set<string> | undefined, expectKey: boolean }> = []
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0x22) {
      const start = i + 1
      for (i = start; i < text.length; i++) {
        const inner = text.charCodeAt(i)
        if (inner === 0x5c) i++
        else if (inner === 0x22) break
      }
      const frame = frames.at(-1)
      if (frame?.keys !== undefined && frame.expectKey) {
        const key = text.slice(start, i)
        if (frame.keys.has(key)) return { tooDeep: false, duplicateKey: key }
        frame.keys.add(key)
        frame.expectKey = false
      }
    } else if (code === 0x7b || code === 0x5b) {
      frames.push({ keys: code === 0x7b ? new Set() : undefined, expectKey: code === 0x7b })
      if (frames.length > depthLimit) return { tooDeep: true }
    } else if (code === 0x7d || code === 0x5d) {
      frames.pop()
    } else if (code === 0x2c) {
      const frame = frames.at(-1)
      if (frame?.keys !== undefined) frame.expectKey = true
    }
  }
  return { tooDeep: false }
}

/** The JSON Pointer (RFC 6901) of member `key` of the value at `parent`. */
const memberPointer = (parent: string, key: string): string => `${parent}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`

/** The pointers of every value or key in `value` that `offends` (a key's being its member's), each tested once. */
function offendingPointers (value: unknown, offends: (value: unknown, key?: string) => boolean, pointer = ''): string[] {
  if (typeof value !== 'object' || value === null) return offends(value) ? [pointer] : []
  const found: string[] = []
  for (const [key, item] of Object.entries(value)) {
    const itemPointer = memberPointer(pointer, key)
    if (offends(item, key)) found.push(itemPointer)
    else if (typeof item === 'object' && item !== null) found.push(...offendingPointers(item, offends, itemPointer))
  }
  return found
}

/** NUL or an unpaired surrogate in a string, a key or a value. */
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const unstorable = (value: unknown, key?: string): boolean => (key !== undefined && UNSTORABLE.test(key)) || (typeof value === 'string' && UNSTORABLE.test(value))

/** A key through which a later merge or spread could reach an object's prototype: what secure-json-parse refuses. */
const prototypeKey = (value: unknown, key?: string): boolean =>
  key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype'))

// Only escapes can produce NUL or a lone surrogate in valid UTF-8 JSON, so the walk runs only when one is present.
const SUSPICIOUS_ESCAPE = /\\u(0000|d[89a-f])/i

export function parseJsonBody (body: Buffer): unknown {
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    throw new MalformedBody('the body is not valid UTF-8')
  }
  if (text.trim() === '') throw new MalformedBody('the body is empty; send a JSON value')
  const shape = scanJson(text, MAX_JSON_DEPTH)
  if (shape.tooDeep) throw new MalformedBody(`the body nests deeper than ${MAX_JSON_DEPTH} levels`)
  if (shape.duplicateKey !== undefined) throw new MalformedBody(`the key "${shape.duplicateKey}" appears twice in one object`)
  let value: unknown
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (error) {
    const message = (error as Error).message
    if (/prototype/i.test(message)) {
      // JSON.parse makes "__proto__" an own key like any other: read so, the body shows where each one is.
      const pointers = offendingPointers(JSON.parse(text) as unknown, prototypeKey)
      throw invalid(pointers.map(pointer => ({ in: 'body', pointer, detail: 'is refused: a key through which an object\'s prototype could be changed (__proto__, or constructor holding a prototype)' })))
    }
    throw new MalformedBody(`the body is not valid JSON: ${message}`)
  }
  if (SUSPICIOUS_ESCAPE.test(text)) {
    const pointers = offendingPointers(value, unstorable)
    if (pointers.length > 0) {
      throw invalid(pointers.map(pointer => ({ in: 'body', pointer, detail: 'must not contain NUL characters or unpaired UTF-16 surrogates' })))
    }
  }
  return value
}
