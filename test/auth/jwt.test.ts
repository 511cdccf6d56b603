import { generateKeyPairSync, createHmac, type KeyObject } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createSigner } from 'fast-jwt'
import t from 'tap'
import { jwksKeys } from '../../src/auth/jwks.js'
import { invalidToken } from '../../src/auth/jwt.js'
import { annotationOf } from '../../src/errors.js'
import { assertProblem, bearer, buildTestApp, signToken, TEST_JWT_SECRET } from '../helper.js'

const READ = '/v1/projects'
const now = (): number => Math.floor(Date.now() / 1000)
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const hs256 = (header: object, payload: object, key: string | Buffer): string => {
  const unsigned = `${b64(header)}.${b64(payload)}`
  return `${unsigned}.${createHmac('sha256', key).update(unsigned).digest('base64url')}`
}
const pem = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString()

t.test('no credential: 401 with the Bearer challenge', async t => {
  const app = await buildTestApp(t)
  const response = await app.inject({ method: 'GET', url: READ, headers: { authorization: undefined } })
  assertProblem(t, response, 401, 'unauthenticated')
  t.equal(response.headers['www-authenticate'], 'Bearer realm="api"')
  t.equal((await app.inject({ method: 'HEAD', url: READ, headers: { authorization: undefined } })).statusCode, 401, 'HEAD too')
  t.equal((await app.inject({ method: 'POST', url: READ, headers: { authorization: undefined, 'content-type': 'application/json' }, payload: '{"name":"x"}' })).statusCode, 401)
  t.equal((await app.inject({ method: 'GET', url: '/health', headers: { authorization: undefined } })).statusCode, 200, 'operations stay public')
  t.equal((await app.inject({ method: 'GET', url: '/openapi.json', headers: { authorization: undefined } })).statusCode, 200)
})

t.test('every kind of bad token is 401 invalid_token, never 500', async t => {
  const app = await buildTestApp(t)
  const valid = signToken({ sub: 'u', scope: 'admin' })
  const [header, payload, signature] = valid.split('.') as [string, string, string]
  const tampered = `${header}.${b64({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), scope: 'admin projects:write' })}.${signature}`
  const cases: Record<string, string> = {
    'malformed header': 'Bearer',
    'extra parts': `Bearer ${valid} extra`,
    'other scheme': `Token ${valid}`,
    'Basic on a resource route': `Basic ${Buffer.from('id:secret').toString('base64')}`,
    'not a JWT': 'Bearer abc.def',
    'no parts at all': 'Bearer nope',
    'garbage JWT': 'Bearer a.b.c',
    'alg none': `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'u', scope: 'admin', exp: now() + 60 })}.`,
    'tampered payload': `Bearer ${tampered}`,
    expired: bearer({ sub: 'u', scope: 'admin', exp: now() - 10 }),
    'not yet valid': bearer({ sub: 'u', scope: 'admin', nbf: now() + 3600 }),
    'no exp': `Bearer ${hs256({ alg: 'HS256', typ: 'JWT' }, { sub: 'u', scope: 'admin' }, TEST_JWT_SECRET)}`,
    'sub of the wrong type': bearer({ sub: 42, scope: 'admin' }),
    'empty sub': bearer({ sub: '', scope: 'admin' }),
    'exp of the wrong type': `Bearer ${hs256({ alg: 'HS256' }, { sub: 'u', scope: 'admin', exp: 'tomorrow' }, TEST_JWT_SECRET)}`,
    'scope of the wrong type': bearer({ sub: 'u', scope: ['admin'] }),
    'signed with another secret': `Bearer ${hs256({ alg: 'HS256' }, { sub: 'u', scope: 'admin', exp: now() + 60 }, 'another-secret-another-secret-another')}`,
    'HS384 not allowed': `Bearer ${createSigner({ key: TEST_JWT_SECRET, algorithm: 'HS384' })({ sub: 'u', scope: 'admin', exp: now() + 60 })}`,
    'RS256 without a configured key': `Bearer ${createSigner({ key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), algorithm: 'RS256' })({ sub: 'u', scope: 'admin' })}`,
    'unknown API key': 'Bearer rsy_notarealkeynotarealkeynotarealkey'
  }
  for (const [name, authorization] of Object.entries(cases)) {
    const response = await app.inject({ method: 'GET', url: READ, headers: { authorization } })
    assertProblem(t, response, 401, 'invalid-token')
    t.match(response.headers['www-authenticate'], /^Bearer realm="api", error="invalid_token"/, name)
  }
  const expired = await app.inject({ method: 'GET', url: READ, headers: { authorization: cases.expired! } })
  t.match(expired.json().detail, /expired/)
  // The detail says what is wrong with the header as sent.
  for (const name of ['malformed header', 'extra parts']) {
    t.match((await app.inject({ method: 'GET', url: READ, headers: { authorization: cases[name]! } })).json().detail, /^a Bearer credential is one token/, name)
  }
  t.match((await app.inject({ method: 'GET', url: READ, headers: { authorization: cases['other scheme']! } })).json().detail, /^only Bearer credentials/)
  // A token without three parts is refused before fast-jwt sees it, in the words fast-jwt's refusal gets.
  const detailOf = async (authorization: string): Promise<unknown> => (await app.inject({ method: 'GET', url: READ, headers: { authorization } })).json().detail
  const malformed = await detailOf(cases['garbage JWT']!)
  t.equal(malformed, 'the token is malformed or its signature does not verify')
  t.equal(await detailOf(cases['not a JWT']!), malformed)
  t.equal(await detailOf(cases['no parts at all']!), malformed)
})

t.test('a refusal\'s reason reaches WWW-Authenticate as the printable ASCII RFC 6750 allows there', async t => {
  // Node refuses a header value with other characters: the answer would have been lost.
  const header = annotationOf(invalidToken('the key … is "odd" \\ or\r\nnot')).headers?.['www-authenticate']
  t.equal(header, 'Bearer realm="api", error="invalid_token", error_description="the key ? is \'odd\' ? or??not"')
})

t.test('a token without sub is accepted (only exp is required), but cannot own records', async t => {
  const app = await buildTestApp(t)
  const anonymous = bearer({ scope: 'projects:read projects:write notes:read notes:write' })
  const created = await app.inject({ method: 'POST', url: READ, headers: { authorization: anonymous }, payload: { name: 'no subject' } })
  t.equal(created.statusCode, 201)
  t.equal(created.json().name, 'no subject')
  const read = await app.inject({ method: 'GET', url: READ, headers: { authorization: anonymous } })
  t.equal(read.statusCode, 200)
  t.same(read.json().map((project: { name: string }) => project.name), ['no subject'])

  // notes are owned: a caller with no subject has none to see and none to stamp.
  for (const [method, url] of [['GET', '/v1/notes'], ['POST', '/v1/notes'], ['GET', '/v1/notes/1']] as const) {
    const refused = await app.inject({ method, url, headers: { authorization: anonymous }, ...(method === 'POST' ? { payload: { name: 'mine?' } } : {}) })
    assertProblem(t, refused, 401, 'invalid-token')
    t.match(refused.json().detail, /no sub, and notes belong to the subject that created them/, `${method} ${url}`)
    t.match(refused.headers['www-authenticate'], /^Bearer realm="api", error="invalid_token"/)
  }
  // An admin without a subject sees every owner's records, but still cannot create one in nobody's name.
  const owner = bearer({ sub: 'alice', scope: 'notes:write' })
  t.equal((await app.inject({ method: 'POST', url: '/v1/notes', headers: { authorization: owner }, payload: { name: 'alice\'s' } })).statusCode, 201)
  const admin = bearer({ scope: 'admin' })
  const all = await app.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: admin } })
  t.equal(all.statusCode, 200)
  t.same(all.json().map((note: { owner: string }) => note.owner), ['alice'])
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/notes', headers: { authorization: admin }, payload: { name: 'nobody\'s' } }), 401, 'invalid-token')
  t.equal((await app.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: admin } })).headers['x-total-count'], '1', 'nothing was created')
})

t.test('a token accepted (and so remembered) is refused once it expires', async t => {
  const app = await buildTestApp(t)
  await app.inject({ method: 'GET', url: READ }) // warm, so a loaded machine answers the next two well inside the token's life
  // At least 4 s of validity (exp has second precision).
  const exp = now() + 5
  const authorization = bearer({ sub: 'u', scope: 'admin', exp })
  t.equal((await app.inject({ method: 'GET', url: READ, headers: { authorization } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: READ, headers: { authorization } })).statusCode, 200, 'the second use is answered from the cache of verified tokens')
  await new Promise(resolve => setTimeout(resolve, exp * 1000 - Date.now() + 100))
  const expired = await app.inject({ method: 'GET', url: READ, headers: { authorization } })
  assertProblem(t, expired, 401, 'invalid-token')
  t.match(expired.json().detail, /expired/)
})

t.test('scopes: read, write, admin; insufficient scope names the one needed', async t => {
  const app = await buildTestApp(t)
  const reader = bearer({ sub: 'r', scope: 'projects:read tasks:read' })
  t.equal((await app.inject({ method: 'GET', url: READ, headers: { authorization: reader } })).statusCode, 200)
  t.equal((await app.inject({ method: 'HEAD', url: READ, headers: { authorization: reader } })).statusCode, 200)
  const write = await app.inject({ method: 'POST', url: READ, headers: { authorization: reader, 'content-type': 'application/json' }, payload: '{"name":"x"}' })
  assertProblem(t, write, 401, 'insufficient-scope')
  t.equal(write.headers['www-authenticate'], 'Bearer realm="api", error="insufficient_scope", scope="projects:write"')
  const notes = await app.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: reader } })
  t.equal(notes.headers['www-authenticate'], 'Bearer realm="api", error="insufficient_scope", scope="notes:read"')
  const writer = bearer({ sub: 'w', scope: 'projects:write' })
  t.equal((await app.inject({ method: 'POST', url: READ, headers: { authorization: writer, 'content-type': 'application/json' }, payload: '{"name":"x"}' })).statusCode, 201)
  assertProblem(t, await app.inject({ method: 'GET', url: READ, headers: { authorization: writer } }), 401, 'insufficient-scope')
  const related = await app.inject({ method: 'GET', url: '/v1/projects/1/tasks', headers: { authorization: bearer({ sub: 'p', scope: 'projects:read' }) } })
  t.equal(related.headers['www-authenticate'], 'Bearer realm="api", error="insufficient_scope", scope="tasks:read"', 'a related collection needs the child\'s scope')
  const admin = bearer({ sub: 'a', scope: 'admin' })
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/projects/1', headers: { authorization: admin } })).statusCode, 204)
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/api-keys', headers: { authorization: bearer({ sub: 'x', scope: 'projects:read projects:write' }) } }), 401, 'insufficient-scope')
})

t.test('AUTHZ_DENIED_STATUS=403 answers insufficient scope with 403', async t => {
  const app = await buildTestApp(t, { env: { AUTHZ_DENIED_STATUS: '403' } })
  const response = await app.inject({ method: 'GET', url: READ, headers: { authorization: bearer({ sub: 'x', scope: 'tasks:read' }) } })
  assertProblem(t, response, 403, 'insufficient-scope')
  t.match(response.headers['www-authenticate'], /insufficient_scope/)
  assertProblem(t, await app.inject({ method: 'GET', url: READ, headers: { authorization: undefined } }), 401, 'unauthenticated')
})

t.test('iss and aud are checked when configured', async t => {
  const app = await buildTestApp(t, { env: { JWT_ISSUER: 'https://issuer.example', JWT_AUDIENCE: 'resourcery' } })
  const ok = bearer({ sub: 'u', scope: 'admin', iss: 'https://issuer.example', aud: 'resourcery' })
  t.equal((await app.inject({ method: 'GET', url: READ, headers: { authorization: ok } })).statusCode, 200)
  for (const claims of [{ iss: 'https://evil.example', aud: 'resourcery' }, { iss: 'https://issuer.example', aud: 'other' }, { aud: 'resourcery' }, { iss: 'https://issuer.example' }]) {
    const response = await app.inject({ method: 'GET', url: READ, headers: { authorization: bearer({ sub: 'u', scope: 'admin', ...claims }) } })
    assertProblem(t, response, 401, 'invalid-token')
  }
})

t.test('an external issuer\'s public key: RS256, ES256 and EdDSA; algorithm confusion refused', async t => {
  const keys = {
    RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
    ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
    EdDSA: generateKeyPairSync('ed25519')
  }
  for (const [algorithm, pair] of Object.entries(keys)) {
    const app = await buildTestApp(t, { env: { JWT_PUBLIC_KEY: pem(pair.publicKey) } })
    const sign = createSigner({ key: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), algorithm: algorithm as 'RS256' })
    const token = sign({ sub: 'ext', scope: 'projects:read', exp: now() + 60 })
    t.equal((await app.inject({ method: 'GET', url: READ, headers: { authorization: `Bearer ${token}` } })).statusCode, 200, `${algorithm} verifies`)
    // The classic confusion attack: HS256 with the public key as the HMAC secret.
    const confused = hs256({ alg: 'HS256', typ: 'JWT' }, { sub: 'ext', scope: 'admin', exp: now() + 60 }, pem(pair.publicKey))
    assertProblem(t, await app.inject({ method: 'GET', url: READ, headers: { authorization: `Bearer ${confused}` } }), 401, 'invalid-token')
    t.equal((await app.inject({ method: 'GET', url: READ, headers: { authorization: bearer({ sub: 'own', scope: 'projects:read' }) } })).statusCode, 200, 'the service\'s own tokens still verify')
    // The subjects of the service's own credentials are its own tokens' alone: an issuer's user named so would own that key's notes.
    for (const sub of ['api-key:1', 'client:rsyc_x']) {
      const posing = assertProblem(t, await app.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: `Bearer ${sign({ sub, scope: 'notes:read', exp: now() + 60 })}` } }), 401, 'invalid-token')
      t.match(posing.detail, /sub names one of this service's own credentials/, `${algorithm}: ${sub}`)
    }
    t.equal((await app.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: bearer({ sub: 'client:rsyc_x', scope: 'notes:read' }) } })).statusCode, 200, 'as the service\'s own token mints them')
  }
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const app = await buildTestApp(t, { env: { JWT_PUBLIC_KEY: pem(keys.RS256.publicKey) } })
  const forged = createSigner({ key: other.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), algorithm: 'RS256' })({ sub: 'x', scope: 'admin', exp: now() + 60 })
  assertProblem(t, await app.inject({ method: 'GET', url: READ, headers: { authorization: `Bearer ${forged}` } }), 401, 'invalid-token')
  const allowList = await buildTestApp(t, { env: { JWT_PUBLIC_KEY: pem(keys.RS256.publicKey), JWT_ALGORITHMS: 'ES256' } })
  const rs = createSigner({ key: keys.RS256.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), algorithm: 'RS256' })({ sub: 'x', scope: 'admin', exp: now() + 60 })
  assertProblem(t, await allowList.inject({ method: 'GET', url: READ, headers: { authorization: `Bearer ${rs}` } }), 401, 'invalid-token')
})

t.test('a JWKS URL: keys fetched by kid, unknown kids refused', async t => {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jwk = { ...pair.publicKey.export({ format: 'jwk' }), kid: 'key-1', alg: 'RS256', use: 'sig' }
  let fetches = 0
  const server = createServer((_request, response) => {
    fetches++
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify({ keys: [jwk] }))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  const app = await buildTestApp(t, { env: { JWT_JWKS_URL: url } })
  const key = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  const token = createSigner({ key, algorithm: 'RS256', kid: 'key-1' })({ sub: 'j', scope: 'projects:read', exp: now() + 60 })
  for (let i = 0; i < 3; i++) {
    t.equal((await app.inject({ method: 'GET', url: READ, headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
  }
  t.equal(fetches, 1, 'the JWKS is cached')
  const unknown = createSigner({ key, algorithm: 'RS256', kid: 'key-2' })({ sub: 'j', scope: 'projects:read', exp: now() + 60 })
  for (let i = 0; i < 5; i++) assertProblem(t, await app.inject({ method: 'GET', url: READ, headers: { authorization: `Bearer ${unknown}` } }), 401, 'invalid-token')
  t.equal(fetches, 1, 'random kids do not turn into a flood of fetches')
})

t.test('JWKS rotation: an unknown kid triggers a refetch (bounded by an interval)', async t => {
  const first = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const second = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  let published = [{ ...first.publicKey.export({ format: 'jwk' }), kid: 'a' }]
  const server = createServer((_request, response) => { response.end(JSON.stringify({ keys: published })) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const keys = jwksKeys(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { refetchIntervalMs: 0 })
  t.ok(await keys.keyFor('a', 'ES256'))
  t.equal(await keys.keyFor('b', 'ES256'), undefined)
  published = [...published, { ...second.publicKey.export({ format: 'jwk' }), kid: 'b' }]
  t.ok(await keys.keyFor('b', 'ES256'), 'the rotated key is found')
  t.equal(await keys.keyFor('a', 'RS256'), undefined, 'a key published for another algorithm is not used')
})

t.test('an issuer that cannot be reached: a 503 to retry, not a 401; keys it published keep verifying', async t => {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const key = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  // A port nothing listens on: the JWKS cannot be fetched at all.
  const closed = createServer()
  await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise(resolve => closed.close(resolve))
  const app = await buildTestApp(t, { env: { JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json` } })
  const token = createSigner({ key, algorithm: 'ES256', kid: 'a' })({ sub: 'j', scope: 'projects:read', exp: now() + 60 })
  const answer = await app.inject({ method: 'GET', url: READ, headers: { authorization: `Bearer ${token}` } })
  const problem = assertProblem(t, answer, 503, 'issuer-unreachable')
  t.equal(problem.detail, 'the token\'s issuer could not be reached for the key that verifies it; try again shortly')
  t.equal(answer.headers['retry-after'], '5')
  t.notOk(answer.headers['www-authenticate'], 'nothing says the token is bad')

  // Known keys outlive an outage: refetched when stale, and kept when the refetch fails.
  let up = true
  const server = createServer((_request, response) => {
    if (!up) { response.statusCode = 502; response.end(); return }
    response.end(JSON.stringify({ keys: [{ ...pair.publicKey.export({ format: 'jwk' }), kid: 'a' }] }))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const keys = jwksKeys(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { refetchIntervalMs: 0, maxAgeMs: 0 })
  const fetched = await keys.keyFor('a', 'ES256')
  t.ok(fetched)
  up = false
  t.equal(await keys.keyFor('a', 'ES256'), fetched, 'the issuer answers 502: the key it published still verifies')
  await t.rejects(keys.keyFor('b', 'ES256'), /answered 502/, 'a key never seen cannot be vouched for')
})
