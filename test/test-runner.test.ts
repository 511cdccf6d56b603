/**
 * The runner `npm test` uses (scripts/run-tests.mjs): a runner that called a
 * failing, crashing or silent file a pass would make every other test moot.
 */
import t, { type Test } from 'tap'
import { runNode } from './support/run-node.js'
import { fromRoot } from './support/paths.js'

const RUNNER = fromRoot('scripts/run-tests.mjs')

const FILES = {
  'passes.test.js': "import t from 'tap'\nt.test('group', async t => { t.pass('one'); t.pass('two') })\n",
  'skips.test.js': "import t from 'tap'\nt.pass('runs')\nt.test('needs a server', { skip: 'no server here' }, async () => {})\n",
  'fails.test.js': "import t from 'tap'\nt.test('group', async t => { t.equal(1, 2, 'one is two'); t.pass('fine') })\n",
  'crashes.test.js': "import t from 'tap'\nt.pass('first')\nthrow new Error('boom at the top')\n",
  'says-nothing.test.js': 'process.exit(0)\n',
  'exits-non-zero.test.js': "import t from 'tap'\nt.pass('all well')\nprocess.on('exit', () => { process.exitCode = 3 })\n"
}

async function run (t: Test, names: Array<keyof typeof FILES>): Promise<{ status: number | null, stdout: string }> {
  // Inside the project (t.testdir is under .tap/), so that `tap` resolves from the files.
  const dir = t.testdir(Object.fromEntries(names.map(name => [name, FILES[name]])))
  const { status, stdout } = await runNode([RUNNER, ...names.map(name => `${dir}/${name}`)], { PATH: process.env.PATH ?? '' })
  return { status, stdout }
}

t.test('passing and skipping files: exit 0, their counts, and each skip with its reason', async t => {
  const { status, stdout } = await run(t, ['passes.test.js', 'skips.test.js'])
  t.equal(status, 0)
  t.match(stdout, /^ok \d - .*passes\.test\.js # 2\/2 passed in /m)
  t.match(stdout, /^ok \d - .*skips\.test\.js # 1\/2 passed, 1 skipped in /m)
  t.match(stdout, /^ {2}# SKIP needs a server: no server here$/m)
  t.match(stdout, /^# \{ total: 4, pass: 3, fail: 0, skip: 1 \}$/m)
})

t.test('a failed assertion, a crash, a file that reports nothing and a non-zero exit each fail the run, with the output', async t => {
  const { status, stdout } = await run(t, ['passes.test.js', 'fails.test.js', 'crashes.test.js', 'says-nothing.test.js', 'exits-non-zero.test.js'])
  t.equal(status, 1)
  t.match(stdout, /^not ok \d - .*fails\.test\.js # 1\/2 passed, 1 failed in /m)
  t.match(stdout, /not ok 1 - one is two/, "the failing file's own TAP, with its diagnostics")
  t.match(stdout, /^not ok \d - .*crashes\.test\.js/m)
  t.match(stdout, /boom at the top/)
  t.match(stdout, /^not ok \d - .*says-nothing\.test\.js # 0\/0 passed/m)
  t.match(stdout, /^not ok \d - .*exits-non-zero\.test\.js # 1\/1 passed in .*\n {2}# the process exited 3/m)
  t.match(stdout, /^ok \d - .*passes\.test\.js/m, 'the passing file still runs and passes')
  // fails and crashes count their failed points; the two files with none count one each.
  t.match(stdout, /^# \{ total: 7, pass: 5, fail: 4, skip: 0 \}$/m)
})
