/**
 * Headers that announce a deprecated resource: `Deprecation` (RFC 9745, a
 * structured-field date), `Sunset` (RFC 8594) and `Link: rel="deprecation"`.
 */
import type { ResourceDefinition } from './define.js'

export function deprecationHeaders (deprecated: ResourceDefinition['deprecated']): Record<string, string> | undefined {
  if (deprecated === undefined || deprecated === false) return undefined
  const details = deprecated === true ? {} : deprecated
  // Without a date the resource is deprecated as of the epoch: already, with no date to tell.
  const since = details.since === undefined ? 0 : Math.floor(Date.parse(details.since) / 1000)
  return {
    deprecation: `@${since}`,
    ...(details.sunset === undefined ? {} : { sunset: new Date(details.sunset).toUTCString() }),
    ...(details.link === undefined ? {} : { link: `<${details.link}>; rel="deprecation"` })
  }
}
