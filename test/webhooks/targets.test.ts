import t from 'tap'
import { backoffMs, RETRY_FOR_MS } from '../../src/webhooks/dispatcher.js'
import { patternMatches } from '../../src/webhooks/events.js'
import { retryAfterSeconds } from '../../src/webhooks/send.js'
import { isPrivateAddress, resolveTarget } from '../../src/webhooks/targets.js'

t.test('loopback, private, link-local, metadata and reserved addresses are private; public ones are not', async t => {
  for (const address of ['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:7f00:1', '::7f00:1', '::127.0.0.1', 'not an address']) {
    t.equal(isPrivateAddress(address), true, address)
  }
  for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) t.equal(isPrivateAddress(address), false, address)
})

t.test('a target is checked after DNS, and allowed when private targets are', async t => {
  await t.rejects(resolveTarget(new URL('http://localhost:1/'), { allowPrivate: false, timeoutMs: 5000 }), { name: 'TargetRefused', message: /resolves to .*loopback/ })
  t.match(await resolveTarget(new URL('http://localhost:1/'), { allowPrivate: true, timeoutMs: 5000 }), { address: /^(127\.0\.0\.1|::1)$/ })
  t.same(await resolveTarget(new URL('https://[2606:4700:4700::1111]/'), { allowPrivate: false, timeoutMs: 5000 }), { address: '2606:4700:4700::1111', family: 6 })
  await t.rejects(resolveTarget(new URL('ftp://93.184.215.14/'), { allowPrivate: false, timeoutMs: 5000 }), { name: 'TargetRefused' })
})

t.test('backoff doubles up to an hour, jittered down by at most half', async t => {
  t.equal(backoffMs(1, 5000, () => 1), 5000)
  t.equal(backoffMs(1, 5000, () => 0), 2500)
  t.equal(backoffMs(4, 5000, () => 1), 40_000)
  t.equal(backoffMs(30, 5000, () => 1), 3_600_000)
  t.ok(RETRY_FOR_MS >= 24 * 3600_000, 'retries go on for at least a day')
})

t.test('Retry-After as seconds or as an HTTP date; patterns with * for either part', async t => {
  t.equal(retryAfterSeconds('120', 0), 120)
  t.equal(retryAfterSeconds(new Date(90_000).toUTCString(), 0), 90)
  t.equal(retryAfterSeconds('soon', 0), undefined)
  t.ok(patternMatches('tasks.*', 'tasks.deleted'))
  t.ok(patternMatches('*.created', 'projects.created'))
  t.ok(patternMatches('*', 'notes.updated'))
  t.notOk(patternMatches('tasks.created', 'tasks.updated'))
  t.notOk(patternMatches('projects.*', 'tasks.created'))
})
