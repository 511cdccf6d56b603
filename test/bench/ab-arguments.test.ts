// What `npm run bench:ab` takes from its command line: the build to compare with, and each side's own settings.
import t from 'tap'
import { AB_USAGE, abArguments, settingsLabel, THIS_BUILD } from '../../bench/ab-arguments.js'

const NONE = { env: {}, nodeFlags: [] }

t.test('a workload and a ref, with the default rounds and seconds and no settings', async t => {
  t.same(abArguments(['JWT', 'HEAD~1']), { workload: 'JWT', ref: 'HEAD~1', rounds: 12, seconds: 3, before: NONE, after: NONE })
  t.same(abArguments(['304', 'main', '6', '1.5']), { workload: '304', ref: 'main', rounds: 6, seconds: 1.5, before: NONE, after: NONE })
})

t.test('each side gets the environment variables and Node flags named for it, in any order among the rest', async t => {
  const parsed = abArguments([
    '--before-env=LOG_LEVEL=warn', 'JWT', THIS_BUILD, '--after-flag=--max-semi-space-size=16',
    '--before-env=EMPTY=', '8', '--after-env=PROBE=a=b', '--after-flag=--single-threaded-gc'
  ])
  t.equal(parsed.ref, THIS_BUILD)
  t.equal(parsed.rounds, 8)
  t.same(parsed.before, { env: { LOG_LEVEL: 'warn', EMPTY: '' }, nodeFlags: [] })
  // Only the first = splits: a value may hold more.
  t.same(parsed.after, { env: { PROBE: 'a=b' }, nodeFlags: ['--max-semi-space-size=16', '--single-threaded-gc'] })
  t.equal(settingsLabel(parsed.after), 'PROBE=a=b --max-semi-space-size=16 --single-threaded-gc')
  t.equal(settingsLabel(parsed.before), 'LOG_LEVEL=warn EMPTY=')
  t.equal(settingsLabel(NONE), '', 'no settings, no label')
})

t.test('what it cannot use is refused with what was wrong and the usage', async t => {
  const refused = (argv: string[], reason: RegExp): void => {
    t.throws(() => abArguments(argv), reason, argv.join(' '))
    t.throws(() => abArguments(argv), { message: new RegExp(AB_USAGE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) }, `${argv.join(' ')} shows the usage`)
  }
  refused(['JWT', '.', '--quick'], /--quick is not an option of bench:ab/)
  refused(['JWT', '.', '--before-env=LOG_LEVEL'], /--before-env=LOG_LEVEL: an environment setting is NAME=VALUE/)
  refused(['JWT', '.', '--after-env=1X=2'], /an environment setting is NAME=VALUE/)
  refused(['JWT', '.', '--after-flag=max-semi-space-size=16'], /a Node flag begins with --/)
  refused(['JWT'], /^usage/)
  refused(['JWT', '.', '0'], /^usage/)
  refused(['JWT', '.', '2.5'], /^usage/)
  refused(['JWT', '.', '12', '0'], /^usage/)
  refused(['JWT', '.', '12', '3', 'more'], /^usage/)
})
