/** Connection URLs in messages: the settings that carry one (DATABASE_URL, REDIS_URL) may carry a password too. */

/** `postgres://app:secret@db/app` → `postgres://app:***@db/app` (and `?password=…` → `?password=***`), for messages and logs. */
export function withoutPassword (url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1***@').replace(/([?&]password=)[^&]*/gi, '$1***')
}
