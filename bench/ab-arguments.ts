/**
 * What `npm run bench:ab` is asked to compare: a workload, the build to set
 * against this one (a git ref, or `.` for this build itself), how many turns
 * of how long, and for each side the environment variables and Node flags its
 * server gets besides the bench's own. `.` with settings compares two
 * settings of one build (LOG_LEVEL=warn against info, a GC flag) without
 * building anything; `.` alone is an A/A run, which shows how far the
 * machine's noise alone moves the pairs.
 */

/** The git ref that names this build, served as it is. */
export const THIS_BUILD = '.'

export const AB_USAGE = 'usage: npm run bench:ab -- <workload> <git-ref, or . for this build> [rounds (12)] [seconds per turn (3)]' +
  ' [--before-env=NAME=VALUE]… [--after-env=NAME=VALUE]… [--before-flag=--node-flag]… [--after-flag=--node-flag]…'

/** What one side's server gets besides what the bench gives every server. */
export interface SideSettings {
  readonly env: Readonly<Record<string, string>>
  readonly nodeFlags: readonly string[]
}

export interface AbArguments {
  readonly workload: string
  readonly ref: string
  readonly rounds: number
  readonly seconds: number
  readonly before: SideSettings
  readonly after: SideSettings
}

const SETTING = /^--(before|after)-(env|flag)=(.*)$/s
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The arguments after `npm run bench:ab --`; anything it cannot use is an error that says what and shows the usage. */
export function abArguments (argv: readonly string[]): AbArguments {
  const positional: string[] = []
  const sides: Record<'before' | 'after', { env: Record<string, string>, nodeFlags: string[] }> = {
    before: { env: {}, nodeFlags: [] },
    after: { env: {}, nodeFlags: [] }
  }
  for (const argument of argv) {
    if (!argument.startsWith('--')) {
      positional.push(argument)
      continue
    }
    const setting = SETTING.exec(argument)
    if (setting === null) throw new Error(`${argument} is not an option of bench:ab\n${AB_USAGE}`)
    const [, side, kind, value] = setting as unknown as [string, 'before' | 'after', 'env' | 'flag', string]
    if (kind === 'flag') {
      if (!value.startsWith('--')) throw new Error(`${argument}: a Node flag begins with -- (--${side}-flag=--max-semi-space-size=16)\n${AB_USAGE}`)
      sides[side].nodeFlags.push(value)
      continue
    }
    const equals = value.indexOf('=')
    const name = equals === -1 ? value : value.slice(0, equals)
    if (equals === -1 || !ENV_NAME.test(name)) throw new Error(`${argument}: an environment setting is NAME=VALUE (--${side}-env=LOG_LEVEL=warn)\n${AB_USAGE}`)
    sides[side].env[name] = value.slice(equals + 1)
  }
  const [workload, ref, roundsArgument, secondsArgument, ...extra] = positional
  const rounds = Number(roundsArgument ?? 12)
  const seconds = Number(secondsArgument ?? 3)
  if (workload === undefined || ref === undefined || extra.length > 0 || !Number.isInteger(rounds) || rounds < 1 || !(seconds > 0)) throw new Error(AB_USAGE)
  return { workload, ref, rounds, seconds, ...sides }
}

/** How a side's settings are told in its label: `LOG_LEVEL=warn --max-semi-space-size=16`, or nothing. */
export function settingsLabel ({ env, nodeFlags }: SideSettings): string {
  return [...Object.entries(env).map(([name, value]) => `${name}=${value}`), ...nodeFlags].join(' ')
}
