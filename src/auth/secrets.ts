/**
 * Credential material: API keys (recognisable `rsy_` prefix, 256 random bits,
 * stored as SHA-256 — enough for secrets that cannot be guessed) and client
 * secrets (stored with scrypt, a deliberately slow hash, salted per client).
 */
import { hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

export const API_KEY_PREFIX = 'rsy_'
export const CLIENT_ID_PREFIX = 'rsyc_'
/** How much of a key is kept in clear to recognise it in a list. */
const SHOWN_KEY_LENGTH = 12

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, length: number, options: { N: number, r: number, p: number }) => Promise<Buffer>
const SCRYPT = { N: 16384, r: 8, p: 1 }

export function hashApiKey (key: string): string {
  // One-shot: a third of createHash's cost, paid on every API-key request.
  return hash('sha256', key, 'hex')
}

export function newApiKey (): { key: string, prefix: string, hash: string } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`
  return { key, prefix: key.slice(0, SHOWN_KEY_LENGTH), hash: hashApiKey(key) }
}

export const looksLikeApiKey = (token: string): boolean => token.startsWith(API_KEY_PREFIX)

export function newClientCredentials (): { clientId: string, clientSecret: string } {
  return { clientId: `${CLIENT_ID_PREFIX}${randomBytes(12).toString('base64url')}`, clientSecret: randomBytes(32).toString('base64url') }
}

export async function hashClientSecret (secret: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scryptAsync(secret, salt, 32, SCRYPT)
  return `${salt.toString('base64')}:${hash.toString('base64')}`
}

export async function verifyClientSecret (secret: string, stored: string): Promise<boolean> {
  const [salt, expected] = stored.split(':')
  if (salt === undefined || expected === undefined) return false
  const hash = await scryptAsync(secret, Buffer.from(salt, 'base64'), 32, SCRYPT)
  const want = Buffer.from(expected, 'base64')
  return want.length === hash.length && timingSafeEqual(hash, want)
}

/** A hash compared when the client does not exist, so that unknown and known ids take the same time. */
export const DECOY_SECRET_HASH = `${randomBytes(16).toString('base64')}:${randomBytes(32).toString('base64')}`

export function parseScopes (text: string): string[] {
  return [...new Set(text.split(/\s+/).filter(scope => scope !== ''))]
}
