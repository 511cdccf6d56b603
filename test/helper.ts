/**
 * Builds the real app on a fresh SQLite file per call, and small assertions
 * shared by the HTTP tests.
 */
import { createSigner } from 'fast-jwt'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { resources } from '../schemas/index.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { ResourceDefinition } from '../src/resources/define.js'
import type { Store } from '../src/store/store.js'

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
  /** Reuse this database file instead of a fresh one. */
  readonly databaseFile?: string
  readonly logStream?: { write (line: string): void }
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

const databaseFile = (t: Test, options: TestAppOptions): string => options.databaseFile ?? testDatabaseFile(t)

export function testConfig (t: Test, options: TestAppOptions = {}) {
  return loadConfig({
    DATABASE_URL: `sqlite:${databaseFile(t, options)}`,
    LOG_LEVEL: 'silent',
    SQLITE_SYNCHRONOUS: 'NORMAL',
    JWT_SECRET: TEST_JWT_SECRET,
    // Tests make many requests from one credential; the rate-limit tests lower this again.
    RATE_LIMIT_MAX: '100000',
    DATA_DIR: `${databaseFile(t, options)}.data`,
    ...options.env
  })
}

export async function buildTestApp (t: Test, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp({
    config: testConfig(t, options),
    definitions: options.definitions ?? resources,
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.logStream === undefined ? {} : { logStream: options.logStream })
  })
  t.teardown(() => app.close())
  return authenticatedByDefault(app)
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
