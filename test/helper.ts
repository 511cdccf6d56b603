/**
 * Builds the real app on a fresh SQLite file per call, and small assertions
 * shared by the HTTP tests.
 */
import { randomUUID } from 'node:crypto'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import { createSigner } from 'fast-jwt'
import pg from 'pg'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { resources } from '../schemas/index.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { ResourceDefinition } from '../src/resources/define.js'
import { RATE_LIMIT_HEADER_NAMES } from '../src/resources/responses.js'
import type { Store } from '../src/store/store.js'
import type { TlsMaterial } from '../src/http/transport.js'
import { contractChecker, type ContractChecker } from './support/contract.js'

export const TEST_JWT_SECRET = 'a-test-secret-that-is-long-enough-for-hs256'

/** A real HS256 token for the test secret (1 hour unless claims say otherwise). */
export function signToken (claims: Record<string, unknown>, options: { expiresIn?: number } = {}): string {
  const expiresIn = 'exp' in claims ? {} : { expiresIn: options.expiresIn ?? 3_600_000 }
  return createSigner({ key: TEST_JWT_SECRET, algorithm: 'HS256', ...expiresIn })(claims)
}

export const bearer = (claims: Record<string, unknown>): string => `Bearer ${signToken(claims)}`

/** The credential injected requests carry unless a test sets `authorization` itself (undefined: none). */
export const ADMIN = bearer({ sub: 'test-admin', scope: 'admin' })

export interface TestAppOptions {
  readonly definitions?: readonly ResourceDefinition[]
  readonly env?: Readonly<Record<string, string>>
  readonly store?: Store
  /** Use this database instead of the test's fresh one. */
  readonly databaseUrl?: string
  readonly logStream?: { write (line: string): void }
  /** Serve HTTPS (HTTP/2 too with env HTTP2=1) with this certificate and key. */
  readonly tls?: TlsMaterial
}

const databaseFiles = new WeakMap<Test, string>()

/** One fresh database file per test (t.testdir() empties the folder on each call, so it is made once). */
export function testDatabaseFile (t: Test): string {
  let file = databaseFiles.get(t)
  if (file === undefined) {
    file = `${t.testdir()}/app.db`
    databaseFiles.set(t, file)
  }
  return file
}

/** The behaviour suites run a second time on PostgreSQL with TEST_DATABASE=postgres (npm test does both). */
export const ON_POSTGRES = process.env.TEST_DATABASE === 'postgres'
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
export const SQLITE_ONLY = ON_POSTGRES ? 'reads the SQLite file directly; covered by the SQLite run' : false

const databaseUrls = new WeakMap<Test, Promise<string>>()

/** A schema of its own on the test PostgreSQL server, dropped when the test ends. */
export async function freshSchema (t: Test): Promise<string> {
  const schema = `t_${randomUUID().replace(/-/g, '')}`
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await client.connect()
  await client.query(`create schema ${schema}`)
  await client.end()
  t.teardown(async () => {
    const cleanup = new pg.Client({ connectionString: TEST_POSTGRES_URL })
    await cleanup.connect()
    await cleanup.query(`drop schema ${schema} cascade`)
    await cleanup.end()
  })
  const url = new URL(TEST_POSTGRES_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.toString()
}

/** The test's own fresh database: a SQLite file, or a PostgreSQL schema in the PostgreSQL run. */
export async function testDatabaseUrl (t: Test): Promise<string> {
  let url = databaseUrls.get(t)
  if (url === undefined) {
    url = ON_POSTGRES ? freshSchema(t) : Promise.resolve(`sqlite:${testDatabaseFile(t)}`)
    databaseUrls.set(t, url)
  }
  return await url
}

export async function testStoreOptions (t: Test) {
  return { databaseUrl: await testDatabaseUrl(t), sqliteSynchronous: 'NORMAL' as const }
}

export async function testConfig (t: Test, options: TestAppOptions = {}) {
  const databaseUrl = options.databaseUrl ?? await testDatabaseUrl(t)
  return loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    SQLITE_SYNCHRONOUS: 'NORMAL',
    JWT_SECRET: TEST_JWT_SECRET,
    // Tests make many requests from one credential; the rate-limit tests lower this again.
    RATE_LIMIT_MAX: '100000',
    DATA_DIR: `${t.testdirName}.data`,
    ...options.env
  })
}

export async function buildTestApp (t: Test, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp({
    config: await testConfig(t, options),
    definitions: options.definitions ?? resources,
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.logStream === undefined ? {} : { logStream: options.logStream }),
    ...(options.tls === undefined ? {} : { tls: options.tls })
  })
  t.teardown(() => app.close())
  return heldToTheDocument(t, authenticatedByDefault(app))
}

const DECODERS: Record<string, (data: Buffer) => Buffer> = { identity: data => data, gzip: gunzipSync, 'x-gzip': gunzipSync, deflate: inflateSync, br: brotliDecompressSync }

/** A request body sent as bytes, as the document describes it: as text, decoded from its Content-Encoding as the service reads it. */
function asSent (payload: InjectOptions['payload'], coding = 'identity'): unknown {
  if (!Buffer.isBuffer(payload)) return payload
  const decode = DECODERS[coding.toLowerCase()]
  if (decode === undefined) return payload
  try {
    return decode(payload).toString('utf8')
  } catch {
    // Not what it says it is: the service refuses it, and a refusal's request is not checked.
    return payload
  }
}

/** Every injected exchange is checked against the app's own OpenAPI document (test/support/contract.ts). */
function heldToTheDocument (t: Test, app: FastifyInstance): FastifyInstance {
  const inject = app.inject.bind(app) as (options: InjectOptions) => Promise<LightMyRequestResponse>
  let checker: ContractChecker | undefined
  const checked = async (options: InjectOptions): Promise<LightMyRequestResponse> => {
    const response = await inject(options)
    checker ??= contractChecker(app.swagger() as Json, { alsoRequired: RATE_LIMIT_HEADER_NAMES })
    const headers = (options.headers ?? {}) as Record<string, string | undefined>
    const problems = checker.check({
      method: options.method ?? 'GET',
      url: String(options.url),
      requestBody: asSent(options.payload, headers['content-encoding']),
      requestType: headers['content-type'] ?? (typeof options.payload === 'object' ? 'application/json' : undefined),
      status: response.statusCode,
      headers: response.headers,
      body: response.body
    })
    for (const problem of problems) t.fail(`contract: ${problem}`)
    return response
  }
  Object.assign(app, { inject: checked })
  return app
}

/** Injected requests go through real authentication with an admin token unless the test sets `authorization`. */
export function authenticatedByDefault (app: FastifyInstance): FastifyInstance {
  const inject = app.inject.bind(app) as (options: InjectOptions) => Promise<LightMyRequestResponse>
  const withCredential = async (options: InjectOptions): Promise<LightMyRequestResponse> => {
    const headers = { ...options.headers } as Record<string, string | undefined>
    if (!('authorization' in headers)) headers.authorization = ADMIN
    if (headers.authorization === undefined) delete headers.authorization
    return await inject({ ...options, headers: headers as Record<string, string> })
  }
  Object.assign(app, { inject: withCredential })
  return app
}

export type Json = Record<string, any>

/** Collects log lines as parsed JSON objects. */
export function logCollector (): { write (line: string): void, lines: Json[] } {
  const lines: Json[] = []
  return { lines, write: (line: string) => { lines.push(JSON.parse(line) as Json) } }
}

export function body (response: LightMyRequestResponse): Json {
  return response.json<Json>()
}

/** Asserts an RFC 9457 problem with this status, and returns its body. */
export function assertProblem (t: Test, response: LightMyRequestResponse, status: number, type?: string): Json {
  t.equal(response.statusCode, status, `status ${status}`)
  t.match(response.headers['content-type'], /^application\/problem\+json/, 'problem media type')
  const problem = body(response)
  t.equal(problem.status, status, 'problem.status')
  t.type(problem.type, 'string')
  t.type(problem.title, 'string')
  t.type(problem.detail, 'string')
  t.type(problem.instance, 'string')
  t.equal(problem.requestId, response.headers['x-request-id'], 'requestId matches X-Request-Id')
  if (type !== undefined) t.equal(problem.type, `urn:resourcery:problem:${type}`)
  return problem
}

/** The `pointer`s a validation problem names, sorted. */
export function pointers (problem: Json): string[] {
  return (problem.errors as Array<{ pointer: string }>).map(issue => issue.pointer).sort()
}

export async function post (app: FastifyInstance, url: string, payload: unknown, headers: Record<string, string> = {}) {
  return await app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } })
}

export async function createProject (app: FastifyInstance, fields: Json = {}): Promise<Json> {
  const response = await post(app, '/v1/projects', { name: `Project ${Math.random().toString(36).slice(2)}`, ...fields })
  if (response.statusCode !== 201) throw new Error(`could not create project: ${response.body}`)
  return body(response)
}

/** Listens on a free loopback port and answers the base URL. */
export async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address')
  return `http://127.0.0.1:${address.port}`
}
