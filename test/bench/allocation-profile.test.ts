// The heap profile reader behind `npm run bench:profile -- <workload> --alloc`, on a profile small enough to count by hand.
import t from 'tap'
import { asWeightedSamples, type HeapProfileNode } from '../../bench/allocation-profile.js'
import { inclusiveTimes, selfTimes } from '../../bench/cpu-profile.js'

const node = (functionName: string, url: string, selfSize: number, children: HeapProfileNode[] = []): HeapProfileNode =>
  ({ callFrame: { functionName, url, lineNumber: 0 }, selfSize, children })

// (root) → handler (100 B) → send (300 B) → writev (600 B); handler → represent (0 B) → send (1000 B).
const head = node('(root)', '', 0, [
  node('handler', 'file:///srv/app/dist/src/handlers.js', 100, [
    node('send', 'file:///srv/app/node_modules/fastify/lib/reply.js', 300, [node('writev', '', 600)]),
    node('represent', 'file:///srv/app/dist/src/links.js', 0, [node('send', 'file:///srv/app/node_modules/fastify/lib/reply.js', 1000)])
  ])
])

t.test('every byte sampled is counted once, wherever it sits in the tree', async t => {
  const { profile, bytes } = asWeightedSamples(head)
  t.equal(bytes, 2000)
  t.equal(profile.nodes.length, 6, 'one node for each of the tree’s')
  t.equal(profile.samples.length, 4, 'a sample for each node that allocated, none for those that only called')
  t.same(new Set(profile.nodes.map(entry => entry.id)).size, 6, 'ids are distinct')
})

t.test('self shares are the bytes a function allocated itself, one function’s nodes added up', async t => {
  const { profile } = asWeightedSamples(head)
  t.same(selfTimes(profile, 0, 10), [
    { name: 'send fastify/lib/reply.js:1', share: 0.65 },
    { name: 'writev', share: 0.3 },
    { name: 'handler dist/src/handlers.js:1', share: 0.05 }
  ])
})

t.test('inclusive shares are the bytes allocated in a function or below it', async t => {
  const { profile } = asWeightedSamples(head)
  t.same(inclusiveTimes(profile, 0, name => name.includes(' dist/src/'), 10), [
    { name: 'handler dist/src/handlers.js:1', share: 1 },
    { name: 'represent dist/src/links.js:1', share: 0.5 }
  ])
})

t.test('a call chain deeper than the stack would allow is read too', async t => {
  let deep = node('leaf', '', 8)
  for (let depth = 0; depth < 100_000; depth++) deep = node(`f${depth}`, 'file:///srv/app/dist/src/deep.js', 0, [deep])
  const { profile, bytes } = asWeightedSamples(deep)
  t.equal(bytes, 8)
  t.equal(profile.nodes.length, 100_001)
})
