/**
 * API-key lookups served from memory for a few seconds, so a busy key costs a
 * hash and a map lookup instead of a database query per request. Revocation
 * through this process takes effect at once; through another process (or the
 * CLI) within API_KEY_CACHE_TTL. Unknown keys are never cached, so a
 * key created anywhere works on its first use; the map is bounded, oldest
 * entry out first, so random keys cannot grow it.
 */
import { BoundedMap } from '../bounded-map.js'
import type { ApiKeyRecord, CredentialStore } from './credentials.js'

const MAX_ENTRIES = 10_000

interface Entry { readonly record: ApiKeyRecord, readonly until: number }

export function cachingApiKeys (credentials: CredentialStore, ttlMs: number): CredentialStore {
  const byHash = new BoundedMap<string, Entry>(MAX_ENTRIES)
  return {
    ...credentials,
    async findApiKey (hash) {
      const now = Date.now()
      const cached = byHash.get(hash)
      if (cached !== undefined && cached.until > now) return cached.record
      byHash.delete(hash)
      const record = await credentials.findApiKey(hash)
      if (record !== undefined && ttlMs > 0) {
        byHash.set(hash, { record, until: now + ttlMs })
      }
      return record
    },
    async revokeApiKey (id) {
      const forget = (): void => { for (const [hash, entry] of byHash) if (entry.record.id === id) byHash.delete(hash) }
      forget()
      try {
        return await credentials.revokeApiKey(id)
      } finally {
        // A lookup that raced the revocation may have cached the row as it was.
        forget()
      }
    }
  }
}
