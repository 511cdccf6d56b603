/**
 * RFC 3339 date-times as this service stores them: one instant, one
 * spelling. Stored as sent, `2026-01-01T02:00:00+02:00` and
 * `2026-01-01T00:00:00Z` (the same instant) did not match each other's
 * filter, and sorted as text `2026-01-01T00:00:00.5Z` came after
 * `2026-01-01T00:00:01Z`. So a date-time is kept as the same instant in UTC
 * with milliseconds, as createdAt and updatedAt are, and filters compare in
 * that form. A value that form cannot hold exactly is refused rather than
 * changed: a leap second (`23:59:60`), a fraction finer than a millisecond
 * (other than trailing zeros), or a year outside 0000-9999 once in UTC.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):?(\d{2}))$/

const MINUTE = 60_000

/** The instant in milliseconds since the epoch, or undefined when it is not one this service stores exactly. */
function instantOf (text: string): number | undefined {
  const match = DATE_TIME.exec(text)
  if (match === null) return undefined
  const [, year, month, day, hour, minute, second, fraction = '', sign, offsetHours = '0', offsetMinutes = '0'] = match
  if (/[1-9]/.test(fraction.slice(3)) || Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return undefined
  const utc = new Date(0)
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
  utc.setUTCFullYear(Number(year), Number(month) - 1, Number(day))
  utc.setUTCHours(Number(hour), Number(minute), Number(second), Number(fraction.slice(0, 3).padEnd(3, '0')))
  // Out-of-range parts (month 13, 25:00, second 60) roll over into another moment; refuse them.
  if (utc.getUTCFullYear() !== Number(year) || utc.getUTCMonth() !== Number(month) - 1 || utc.getUTCDate() !== Number(day) ||
    utc.getUTCHours() !== Number(hour) || utc.getUTCMinutes() !== Number(minute) || utc.getUTCSeconds() !== Number(second)) return undefined
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * MINUTE
  const instant = utc.getTime() - offset
  const inUtc = new Date(instant).getUTCFullYear()
  return inUtc >= 0 && inUtc <= 9999 ? instant : undefined
}

/** Whether this service can store the date-time exactly (the `date-time` format of every schema it validates with). */
export function isStorableDateTime (text: string): boolean {
  return instantOf(text) !== undefined
}

/** The stored spelling of a date-time (UTC, milliseconds, `Z`), or undefined for one it cannot hold exactly. */
export function canonicalDateTime (text: string): string | undefined {
  const instant = instantOf(text)
  return instant === undefined ? undefined : new Date(instant).toISOString()
}
