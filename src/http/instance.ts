/** The path of a request URL, without its query: a problem's `instance`, the base of pagination links. */
export function instanceOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

/** The query string of a request target, without its `?`; empty when it has none. */
export function searchOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? '' : url.slice(query + 1)
}

/** The path a list's page links are built on: the request's, without its query and trailing slashes. */
export const linkBase = (url: string): string => instanceOf(url).replace(/\/+$/, '')
