/** `0`, `90`, `90s`, `30m`, `1h`, `7d` → seconds; undefined when it is none of those. */
export function parseDuration (text: string): number | undefined {
  const match = /^(0|[1-9][0-9]*)([smhd]?)$/.exec(text.trim())
  if (match === null) return undefined
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd']
  return Number(match[1]) * unit
}

/** The longest delay Node's timers keep: 2^31-1 ms, about 24.8 days. A longer one fires after 1 ms instead. */
export const LONGEST_TIMER_MS = 2_147_483_647

/**
 * The longest lifetime, window or retention a setting or option may name (100 years, 36500d): its end must
 * still be a date RFC 3339 can write (a four-digit year), where 3,000,000 days wrote `+010190-…` and
 * 100,000,000 days ended the command with a stack trace.
 */
export const LONGEST_DURATION_SECONDS = 100 * 365 * 86_400
