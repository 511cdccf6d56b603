import t from 'tap'
import { RATE_LIMIT_HEADER_NAMES } from '../../src/resources/responses.js'
import { body, buildTestApp } from '../helper.js'
import { contractChecker } from '../support/contract.js'

// The whole suite runs every injected exchange through this checker (test/helper.ts); here it must catch lies.
t.test('the contract checker catches undocumented statuses, wrong bodies, missing or undocumented headers and invalid accepted requests', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const checker = contractChecker(document, { alsoRequired: RATE_LIMIT_HEADER_NAMES })
  const limits = { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '99', 'x-ratelimit-reset': '60', 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=99;t=60' }
  const json = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'a1', 'cache-control': 'private, no-cache', ...limits }
  const project = { id: 1, name: 'p', active: true, tags: [], links: { self: '/v1/projects/1', tasks: '/v1/projects/1/tasks' }, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' }
  const validators = { etag: '"a.1.1"', 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT' }
  const ok = { method: 'GET', url: '/v1/projects/1', status: 200, headers: { ...json, ...validators }, body: JSON.stringify(project) }
  t.same(checker.check(ok), [], 'a true exchange passes')
  t.match(checker.check({ ...ok, status: 418 }), [/status not documented/])
  t.match(checker.check({ ...ok, body: JSON.stringify({ ...project, id: 'one' }) }), [/body does not match/])
  t.match(checker.check({ ...ok, body: JSON.stringify({ ...project, secret: 1 }) }), [/body does not match/])
  t.match(checker.check({ ...ok, headers: { ...ok.headers, 'content-type': 'text/html' } }), [/media type text\/html not documented/])
  const { 'x-ratelimit-limit': _dropped, ...withoutLimit } = ok.headers
  t.match(checker.check({ ...ok, headers: withoutLimit }), [/documented header X-RateLimit-Limit missing/])
  t.same(contractChecker(document).check({ ...ok, headers: withoutLimit }), [], 'which the document itself lets go (a Redis outage)')
  t.match(checker.check({ ...ok, headers: { ...ok.headers, etag: undefined } }), [/documented header ETag missing/], 'a record always has its ETag')
  const created = { method: 'POST', url: '/v1/projects', status: 201, headers: { ...json, ...validators, location: '/v1/projects/1', 'cache-control': 'no-store' }, body: JSON.stringify(project), requestBody: { name: 'p', colour: 'red' }, requestType: 'application/json' }
  t.match(checker.check(created), [/accepted a request the document calls invalid/])
  t.same(checker.check({ ...ok, url: '/not/documented' }), [], 'undocumented paths (404s) are not operations')
  const unreadable = { ...ok, url: '/v1/projects/%zz', status: 400, headers: { 'content-type': 'application/problem+json', 'x-request-id': 'a2', 'cache-control': 'no-store', ...limits }, body: JSON.stringify({ type: 'urn:resourcery:problem:validation', title: 'Request is invalid', status: 400, detail: 'x', instance: '/v1/projects/%zz', requestId: 'a2' }) }
  t.same(checker.check(unreadable), [], 'a path the router cannot read is refused like any request')
  t.match(checker.check({ ...unreadable, headers: { ...unreadable.headers, 'x-request-id': undefined } }), [/documented header X-Request-Id missing/])
  t.match(checker.check({ ...unreadable, headers: { ...unreadable.headers, 'x-ratelimit-limit': undefined } }), [/documented header X-RateLimit-Limit missing/], 'and carries the rate-limit headers too')
  t.match(checker.check({ ...ok, headers: { ...ok.headers, 'cache-control': 'no-store' } }), [/Cache-Control is no-store, documented as `private, no-cache`/])
  t.match(checker.check({ ...ok, headers: { ...ok.headers, 'x-debug': '1' } }), [/header x-debug sent but not documented/], 'the document names every header an answer carries')
})

// Presence comes from the document: what it marks required must be there, and nothing else need be.
t.test('the checker asks for the headers the document marks required, and no others', async t => {
  const app = await buildTestApp(t)
  const checker = contractChecker(body(await app.inject({ method: 'GET', url: '/openapi.json' })), { alsoRequired: RATE_LIMIT_HEADER_NAMES })
  const list = await app.inject({ method: 'GET', url: '/v1/projects' })
  const exchange = { method: 'GET', url: '/v1/projects', status: list.statusCode, headers: list.headers, body: list.body }
  t.same(checker.check(exchange), [])
  t.same(checker.check({ ...exchange, headers: { ...list.headers, 'x-total-count': undefined } }), [], 'a cursor page has no X-Total-Count')
  t.match(checker.check({ ...exchange, headers: { ...list.headers, link: undefined } }), [/documented header Link missing/], 'but every page of a resource has links')
  const keys = await app.inject({ method: 'GET', url: '/v1/api-keys' })
  const adminList = { method: 'GET', url: '/v1/api-keys', status: keys.statusCode, headers: keys.headers, body: keys.body }
  t.same(checker.check({ ...adminList, headers: { ...keys.headers, link: undefined } }), [], 'an unpaged admin list has no Link')
  t.match(checker.check({ ...adminList, headers: { ...keys.headers, 'x-total-count': undefined } }), [/documented header X-Total-Count missing/], 'and always its count')
})
