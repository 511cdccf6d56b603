/**
 * Headers that announce a deprecated resource: `Deprecation` (RFC 9745, a
 * structured-field date), `Sunset` (RFC 8594) and `Link: rel="deprecation"`.
 */
import type { ResourceDefinition } from './define.js'
import { header } from './responses.js'

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

/** The same headers as documented on every response of a deprecated resource's operations. */
export function deprecationHeaderDocs (deprecated: ResourceDefinition['deprecated']): Record<string, ReturnType<typeof header>> | undefined {
  const headers = deprecationHeaders(deprecated)
  if (headers === undefined) return undefined
  return {
    Deprecation: header('string', `\`${headers.deprecation}\`: this resource is deprecated (RFC 9745; the date, in seconds since the epoch, it was deprecated).`),
    ...(headers.sunset === undefined ? {} : { Sunset: header('string', `\`${headers.sunset}\`: when this resource will go (RFC 8594).`) }),
    ...(headers.link === undefined ? {} : { Link: header('string', `Holds \`${headers.link}\`: where its deprecation is explained (with a list's page links, on lists).`) })
  }
}
