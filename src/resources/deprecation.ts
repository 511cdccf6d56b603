/**
 * Headers that announce a deprecated resource: `Deprecation` (RFC 9745, a
 * structured-field date), `Sunset` (RFC 8594) and `Link: rel="deprecation"`.
 */
import type { Deprecation, ResourceDefinition } from './define.js'
import { header } from './responses.js'

type DeprecationMark = ResourceDefinition['deprecated']

export function isDeprecated (mark: DeprecationMark): mark is true | Deprecation {
  return mark !== undefined && mark !== false
}

/**
 * The headers of a path that answers for these resources. A related
 * collection (`/v1/projects/7/tasks`) answers for two: it holds the child's
 * records and lives under the parent's, so it is deprecated as soon as either
 * is and goes with the first of them to go.
 */
/** The headers a deprecated path's answers carry, by their names as sent (a type, not an interface: it is also a Record of them). */
export type DeprecationHeaders = { readonly deprecation: string, readonly sunset?: string, readonly link?: string }

export function deprecationHeaders (...marks: DeprecationMark[]): DeprecationHeaders | undefined {
  const deprecations = marks.filter(isDeprecated).map(mark => mark === true ? {} : mark)
  if (deprecations.length === 0) return undefined
  // Without a date a resource is deprecated as of the epoch: already, with no date to tell.
  const since = Math.min(...deprecations.map(({ since }) => since === undefined ? 0 : Math.floor(Date.parse(since) / 1000)))
  const sunsets = deprecations.flatMap(({ sunset }) => sunset === undefined ? [] : [Date.parse(sunset)])
  const links = deprecations.flatMap(({ link }) => link === undefined ? [] : [`<${link}>; rel="deprecation"`])
  return {
    deprecation: `@${since}`,
    ...(sunsets.length === 0 ? {} : { sunset: new Date(Math.min(...sunsets)).toUTCString() }),
    ...(links.length === 0 ? {} : { link: links.join(', ') })
  }
}

/** The same headers as documented on every response of a deprecated path's operations. */
export function deprecationHeaderDocs (headers: DeprecationHeaders | undefined): Record<string, ReturnType<typeof header>> | undefined {
  if (headers === undefined) return undefined
  return {
    Deprecation: header('string', `\`${headers.deprecation}\`: this resource is deprecated (RFC 9745; the date, in seconds since the epoch, it was deprecated).`, headers.deprecation),
    ...(headers.sunset === undefined ? {} : { Sunset: header('string', `\`${headers.sunset}\`: when this resource will go (RFC 8594).`, headers.sunset) }),
    ...(headers.link === undefined ? {} : { Link: header('string', `Holds \`${headers.link}\`: where its deprecation is explained (with a list's page links, on lists).`, headers.link) })
  }
}
