/**
 * What the bench's load generator changes from request to request
 * (bench/measure.ts): a random id in the path, and a fresh value of a header
 * (an Idempotency-Key per create), the rest of the request kept.
 */
import t from 'tap'
import type autocannon from 'autocannon'
import { perRequest } from '../../bench/measure.js'

const request = (): autocannon.Request => ({ method: 'POST', path: '/v1/tasks', headers: { authorization: 'Bearer x' }, body: '{}' })

t.test('a workload that changes nothing per request gets no setup', async t => {
  t.equal(perRequest({ name: 'plain', path: '/v1/tasks' }), undefined)
})

t.test('a fresh header gets a new value on every request, beside the workload\'s headers', async t => {
  const setup = perRequest({ name: 'keyed', path: '/v1/tasks', freshHeader: 'idempotency-key' })!
  const sent = Array.from({ length: 50 }, () => setup(request()))
  t.equal(new Set(sent.map(each => each.headers!['idempotency-key'])).size, 50, 'fifty requests, fifty keys')
  t.ok(sent.every(each => each.headers!.authorization === 'Bearer x' && each.path === '/v1/tasks' && each.body === '{}'), 'the rest kept')
})

t.test('{id} becomes a random id from 1 to `ids`', async t => {
  const setup = perRequest({ name: 'ids', path: '/v1/tasks/{id}', ids: 3 })!
  const paths = new Set(Array.from({ length: 200 }, () => setup({ ...request(), path: '/v1/tasks/{id}' }).path))
  t.same([...paths].sort(), ['/v1/tasks/1', '/v1/tasks/2', '/v1/tasks/3'])
})
