/**
 * The keys that verify tokens: the service's own HS256 secret (configured, or
 * generated once into DATA_DIR with mode 0600 for a first run), and optionally
 * an external issuer's public key. Production refuses to run on a generated
 * secret, because every process and restart must share one.
 */
import { randomBytes, createPublicKey, type KeyObject } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import { ConfigError, type Config } from '../config.js'
import { makeFolder } from '../folders.js'

export const GENERATED_SECRET_FILE = 'jwt-secret'

export async function serviceSecret (config: Config, log: FastifyBaseLogger): Promise<string> {
  if (config.jwtSecret !== '') return config.jwtSecret
  if (config.nodeEnv === 'production') {
    throw new ConfigError(['JWT_SECRET is required when NODE_ENV=production (at least 32 characters, e.g. from `openssl rand -base64 48`): it signs and verifies the service\'s tokens and must be the same for every process'])
  }
  try {
    return await generatedSecret(config.dataDir, log)
  } catch (error) {
    throw new ConfigError([`DATA_DIR=${config.dataDir} cannot keep the generated signing secret: ${(error as Error).message}; make it a folder this process can write, or set JWT_SECRET`])
  }
}

/** The secret generated into `dataDir` on the first start, and read from there on every later one. */
async function generatedSecret (dataDir: string, log: FastifyBaseLogger): Promise<string> {
  const file = join(dataDir, GENERATED_SECRET_FILE)
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (existing !== undefined) return existing.trim()
  makeFolder(dataDir)
  const secret = randomBytes(48).toString('base64url')
  try {
    // `wx`: when two processes start at once, the first file wins and both use it.
    await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return (await readFile(file, 'utf8')).trim()
    throw error
  }
  log.warn({ file }, 'no JWT_SECRET configured: generated a signing secret for this data directory; set JWT_SECRET in production')
  return secret
}

/** The JWT algorithm a public key is for: RSA → RS256, P-256 → ES256, Ed25519 → EdDSA. */
export function algorithmOf (key: KeyObject): string | undefined {
  const type = key.asymmetricKeyType
  if (type === 'rsa') return 'RS256'
  if (type === 'ed25519') return 'EdDSA'
  if (type === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256'
  return undefined
}

export interface ExternalKey {
  readonly pem: string
  readonly algorithm: string
}

async function readKeyFile (path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    throw new ConfigError([`JWT_PUBLIC_KEY=${path} is neither PEM text nor a file that can be read: ${(error as Error).message}`])
  }
}

/** JWT_PUBLIC_KEY as PEM text or a path to a PEM file, with the algorithm its key type implies. */
export async function externalPublicKey (config: Config): Promise<ExternalKey | undefined> {
  if (config.jwtPublicKey === '') return undefined
  const pem = config.jwtPublicKey.includes('-----BEGIN') ? config.jwtPublicKey : await readKeyFile(config.jwtPublicKey)
  let key
  try {
    key = createPublicKey(pem)
  } catch {
    throw new ConfigError(['JWT_PUBLIC_KEY is not a PEM public key (or a readable file holding one)'])
  }
  const algorithm = algorithmOf(key)
  const type = key.asymmetricKeyType
  const curve = key.asymmetricKeyDetails?.namedCurve
  if (algorithm === undefined) throw new ConfigError([`JWT_PUBLIC_KEY has key type ${type ?? 'unknown'}${curve === undefined ? '' : ` (${curve})`}; use RSA, P-256 or Ed25519`])
  return { pem, algorithm }
}
