/** The path of a request URL, without its query: a problem's `instance`, the base of pagination links. */
export function instanceOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
