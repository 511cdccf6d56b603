// The profile reader behind `npm run bench:profile`, on a profile small enough to count by hand.
import t from 'tap'
import { frameName, inclusiveTimes, selfTimes, type CpuProfile } from '../../bench/cpu-profile.js'

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber })

// (root) → handler → send → writev, and handler → handler (recursion) → send.
const profile: CpuProfile = {
  startTime: 1_000,
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2] },
    { id: 2, callFrame: frame('handler', 'file:///srv/app/dist/src/handlers.js', 9), children: [3, 5] },
    { id: 3, callFrame: frame('send', 'file:///srv/app/node_modules/fastify/lib/reply.js', 99), children: [4] },
    { id: 4, callFrame: frame('writev') },
    { id: 5, callFrame: frame('handler', 'file:///srv/app/dist/src/handlers.js', 9), children: [6] },
    { id: 6, callFrame: frame('send', 'file:///srv/app/node_modules/fastify/lib/reply.js', 99) }
  ],
  // Times after startTime: 100 (a start-up sample), then 200, 300, 400, 500, 600.
  samples: [4, 4, 4, 6, 2, 3],
  timeDeltas: [100, 100, 100, 100, 100, 100]
}

t.test('frames are named by function, package path and 1-based line', async t => {
  t.equal(frameName(frame('send', 'file:///srv/app/node_modules/fastify/lib/reply.js', 99)), 'send fastify/lib/reply.js:100')
  t.equal(frameName(frame('get', 'file:///srv/app/dist/src/resources/handlers.js', 110)), 'get dist/src/resources/handlers.js:111')
  t.equal(frameName(frame('', 'node:events', 470)), '(anonymous) node:events:471')
  t.equal(frameName(frame('writev')), 'writev', 'a native frame has no file')
})

t.test('self time is where each sample landed, as a share of the samples counted', async t => {
  t.same(selfTimes(profile, 0, 10), [
    { name: 'writev', share: 0.5 },
    { name: 'send fastify/lib/reply.js:100', share: 2 / 6 },
    { name: 'handler dist/src/handlers.js:10', share: 1 / 6 }
  ])
  t.same(selfTimes(profile, 0, 1), [{ name: 'writev', share: 0.5 }], 'only the top ones')
})

t.test('samples before `from` are left out', async t => {
  // The first sample is at 1,100: from 1,150 on, five remain, two in writev and two in send (ties rank by name).
  t.same(selfTimes(profile, 1_150, 10)[0], { name: 'send fastify/lib/reply.js:100', share: 0.4 })
  t.same(selfTimes(profile, 1_150, 10).find(share => share.name === 'writev'), { name: 'writev', share: 0.4 })
  t.same(selfTimes(profile, 10_000, 10), [], 'nothing sampled after the profile ended')
})

t.test('inclusive time counts a chosen function once per sample, however deep it recurs', async t => {
  const engine = (name: string): boolean => name.includes(' dist/src/')
  t.same(inclusiveTimes(profile, 0, engine, 10), [{ name: 'handler dist/src/handlers.js:10', share: 1 }])
  t.same(inclusiveTimes(profile, 0, name => name.startsWith('send '), 10), [{ name: 'send fastify/lib/reply.js:100', share: 5 / 6 }])
})
