/** `0`, `90`, `90s`, `30m`, `1h`, `7d` → seconds; undefined when it is none of those. */
export function parseDuration (text: string): number | undefined {
  const match = /^(0|[1-9][0-9]*)([smhd]?)$/.exec(text.trim())
  if (match === null) return undefined
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd']
  return Number(match[1]) * unit
}
