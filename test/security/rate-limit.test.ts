import t from 'tap'
import { assertProblem, bearer, buildTestApp } from '../helper.js'

const limited = (max: number, extra: Record<string, string> = {}) => ({ env: { RATE_LIMIT_MAX: String(max), ...extra } })

t.test('every answer carries the limit headers; over the limit is a 429 problem with Retry-After', async t => {
  const app = await buildTestApp(t, limited(3))
  for (let i = 0; i < 3; i++) {
    const response = await app.inject({ method: 'GET', url: '/v1/projects' })
    t.equal(response.statusCode, 200)
    t.equal(response.headers['x-ratelimit-limit'], '3')
    t.equal(response.headers['x-ratelimit-remaining'], String(2 - i))
    t.match(response.headers['x-ratelimit-reset'], /^\d+$/)
    t.equal(response.headers['ratelimit-policy'], '"default";q=3;w=60')
    t.match(response.headers.ratelimit, new RegExp(`^"default";r=${2 - i};t=\\d+$`))
  }
  const refused = await app.inject({ method: 'GET', url: '/v1/projects' })
  const problem = assertProblem(t, refused, 429, 'rate-limited')
  t.match(refused.headers['retry-after'], /^\d+$/)
  t.match(problem.detail, /more than 3 requests/)
  t.equal(refused.headers['x-ratelimit-remaining'], '0')
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'operations are not limited')
})

t.test('every refusal on a /v1 route carries the limit headers too, whichever layer refuses', async t => {
  const app = await buildTestApp(t, limited(1000))
  const admin = bearer({ sub: 'admin', scope: 'admin' })
  const refusals = [
    { status: 406, request: { method: 'GET', url: '/v1/projects', headers: { authorization: admin, accept: 'text/html' } } },
    { status: 414, request: { method: 'GET', url: `/v1/projects?name=${'x'.repeat(5000)}`, headers: { authorization: admin } } },
    { status: 400, request: { method: 'GET', url: `/v1/projects?${Array.from({ length: 70 }, (_, i) => `p${i}=1`).join('&')}`, headers: { authorization: admin } } },
    { status: 401, request: { method: 'GET', url: '/v1/projects', headers: { authorization: 'Bearer rsy_unknown' } } },
    { status: 404, request: { method: 'GET', url: '/v1/projects/999999', headers: { authorization: admin } } },
    { status: 405, request: { method: 'DELETE', url: '/v1/projects', headers: { authorization: admin } } },
    { status: 415, request: { method: 'POST', url: '/v1/projects', headers: { authorization: admin, 'content-type': 'text/plain' }, payload: 'x' } },
    { status: 400, request: { method: 'GET', url: '/v1/projects/%zz', headers: { authorization: admin } } },
    { status: 414, request: { method: 'GET', url: `/v1/projects/${'9'.repeat(1001)}`, headers: { authorization: admin } } },
    { status: 404, request: { method: 'GET', url: '/v1/nothing', headers: { authorization: admin } } },
    // An unknown path is a 404 whatever its query, counted like any other.
    { status: 404, request: { method: 'GET', url: `/v1/nothing?name=${'x'.repeat(5000)}`, headers: { authorization: admin } } }
  ] as const
  for (const { status, request } of refusals) {
    const response = await app.inject(request)
    t.equal(response.statusCode, status, `${request.method} ${request.url.slice(0, 40)}`)
    t.equal(response.headers['x-ratelimit-limit'], '1000', `${status} carries X-RateLimit-Limit`)
    t.match(response.headers.ratelimit, /^"default";r=\d+;t=\d+$/, `${status} carries RateLimit`)
  }
})

t.test('counted per credential once authenticated', async t => {
  const app = await buildTestApp(t, limited(2))
  const alice = bearer({ sub: 'alice', scope: 'projects:read' })
  const bob = bearer({ sub: 'bob', scope: 'projects:read' })
  for (let i = 0; i < 2; i++) t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: alice } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: alice } })).statusCode, 429)
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: bob } })).statusCode, 200, 'another credential has its own budget')
  const aliceAgain = bearer({ sub: 'alice', scope: 'projects:read tasks:read' })
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: aliceAgain } })).statusCode, 429, 'a new token for the same subject shares it')
  // A token without sub names nobody: it is counted as itself.
  const anonymous = bearer({ scope: 'projects:read' })
  for (let i = 0; i < 2; i++) t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: anonymous } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: anonymous } })).statusCode, 429, 'a token without sub has a budget of its own')
  const otherAnonymous = bearer({ scope: 'projects:read tasks:read' })
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: otherAnonymous } })).statusCode, 200, 'and another such token another')
})

t.test('counted per client IP before authentication, so guessing credentials is limited', async t => {
  const app = await buildTestApp(t, limited(3))
  for (let i = 0; i < 3; i++) {
    const response = await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: `Bearer rsy_guess${i}` } })
    t.equal(response.statusCode, 401)
    t.equal(response.headers['x-ratelimit-limit'], '3')
  }
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: 'Bearer rsy_guess-again' } }), 429)
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: undefined } }), 429, 'rate-limited')
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: bearer({ sub: 'real', scope: 'admin' }) } })).statusCode, 200, 'a valid credential is counted on its own')
  const unknown = await app.inject({ method: 'GET', url: '/v1/nothing-here' })
  t.equal(unknown.statusCode, 429, 'unknown paths count against the IP too')
})

t.test('limits per scope, and a stricter one for the token endpoint', async t => {
  const app = await buildTestApp(t, limited(2, { RATE_LIMIT_SCOPES: 'admin=5,projects:read=3', TOKEN_RATE_LIMIT_MAX: '2' }))
  const reader = bearer({ sub: 'reader', scope: 'projects:read tasks:read' })
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: reader } })).statusCode)
  t.same(statuses, [200, 200, 200, 429], 'the highest limit among the credential\'s scopes')
  const admin = bearer({ sub: 'root', scope: 'admin' })
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: admin } })).headers['x-ratelimit-limit'], '5')

  const basic = `Basic ${Buffer.from('rsyc_x:nope').toString('base64')}`
  const token = async () => await app.inject({ method: 'POST', url: '/v1/auth/token', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' })
  t.equal((await token()).statusCode, 401)
  t.equal((await token()).headers['x-ratelimit-limit'], '2')
  assertProblem(t, await token(), 429)
})

t.test('X-Forwarded-For moves the key only when TRUST_PROXY says so', async t => {
  const closed = await buildTestApp(t, limited(2))
  const spoof = (app: typeof closed, ip: string) => app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: undefined, 'x-forwarded-for': ip } })
  t.equal((await spoof(closed, '1.1.1.1')).headers['x-ratelimit-remaining'], '1')
  t.equal((await spoof(closed, '2.2.2.2')).headers['x-ratelimit-remaining'], '0', 'a rotating X-Forwarded-For is ignored')
  t.equal((await spoof(closed, '3.3.3.3')).statusCode, 429)

  const proxied = await buildTestApp(t, limited(2, { TRUST_PROXY: '127.0.0.1' }))
  t.equal((await spoof(proxied, '1.1.1.1')).headers['x-ratelimit-remaining'], '1')
  t.equal((await spoof(proxied, '2.2.2.2')).headers['x-ratelimit-remaining'], '1', 'behind a trusted proxy each client has its own budget')
  const hops = await buildTestApp(t, limited(2, { TRUST_PROXY: '1' }))
  t.equal((await spoof(hops, '4.4.4.4')).headers['x-ratelimit-remaining'], '1')
  t.equal((await spoof(hops, '5.5.5.5')).headers['x-ratelimit-remaining'], '1', 'a hop count works too')
})
