// The allocation sampler that `npm run bench:profile -- <workload> --alloc` preloads, in a process of its own that makes garbage on demand.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { collectSamples, sampledProcess, startSampling } from '../../bench/allocation-control.js'
import { asWeightedSamples } from '../../bench/allocation-profile.js'
import { selfTimes } from '../../bench/cpu-profile.js'

// 64 MB in objects of about 1 KB that nothing keeps: all of it is garbage by the next scavenge.
const GARBAGE_BYTES = 64 * 1024 * 1024
const script = `
  function makeGarbage () {
    let last
    for (let i = 0; i < ${GARBAGE_BYTES / 1024}; i++) last = new Array(126).fill(i)
    return last.length
  }
  process.stdin.once('data', () => { makeGarbage(); process.stdout.write('done\\n') })
  process.stdout.write('ready\\n')
`

t.test('sampling counts the garbage the collector has freed, names who made it, and counts the collections', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'resourcery-allocations-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const recordFile = join(dir, 'record.json')
  const { nodeFlags, env } = sampledProcess(recordFile)
  const child = spawn(process.execPath, [...nodeFlags, '-e', script], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  const lines = child.stdout.setEncoding('utf8')
  t.equal(String((await once(lines, 'data'))[0]).trim(), 'ready')

  await startSampling(child, recordFile)
  child.stdin.write('go\n')
  t.equal(String((await once(lines, 'data'))[0]).trim(), 'done')
  const record = await collectSamples(child, recordFile)

  const { profile, bytes } = asWeightedSamples(record.profile.head)
  // Only what was still alive would be a few KB: the sampler would then have missed what makes the collector run.
  t.ok(bytes > GARBAGE_BYTES / 2, `sampled ${bytes} bytes of the ${GARBAGE_BYTES} made`)
  t.match(selfTimes(profile, 0, 1)[0], { name: /^makeGarbage / }, 'the function that made the garbage is the one that allocated most')
  t.ok((record.collections.scavenge?.count ?? 0) > 0, 'the scavenges it brought are counted')
  t.ok(record.seconds > 0)
})
