/**
 * A frontend's typed client, compiled against types generated from
 * openapi/openapi.json (openapi-typescript) and run against a live server by
 * typed-client.test.ts. If the document and the server disagree, either the
 * compiler or this run fails.
 */
import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const base = process.env.BASE_URL!
const client = createClient<paths>({ baseUrl: base, headers: { authorization: process.env.AUTHORIZATION! } })

/** `true` when every value of T has member K (the document marked the header required), else `false`. */
type Promised<T, K extends keyof T> = Record<never, never> extends Pick<T, K> ? false : true
type RecordHeaders = paths['/v1/projects/{id}']['get']['responses'][200]['headers']
type PageHeaders = paths['/v1/projects']['get']['responses'][200]['headers']
// Checked by the compiler: a frontend may read a record's ETag and a page's links without a guard, but not a page's count (a cursor page has none).
const promised: [Promised<RecordHeaders, 'ETag'>, Promised<PageHeaders, 'Link'>, Promised<PageHeaders, 'X-Total-Count'>] = [true, true, false]

function fail (message: string): never {
  throw new Error(message)
}

const steps: string[] = []

for (const name of ['Typed A', 'Typed B', 'Typed C']) {
  const created = await client.POST('/v1/projects', { body: { name, budget: 10, tags: ['typed'] } })
  if (created.data === undefined) fail(`create: ${JSON.stringify(created.error)}`)
  const id: number = created.data.id
  const self: string = created.data.links.self
  if (self !== `/v1/projects/${id}`) fail('links.self')
}
steps.push('created')

const page = await client.GET('/v1/projects', { params: { query: { filter: 'active', sort: '-name', limit: 2 } } })
if (page.data === undefined) fail('list')
const names: Array<string | undefined> = page.data.map(project => project.name)
if (names.join() !== 'Typed C,Typed B') fail(`sorted page: ${names.join()}`)
const next = /<([^>]+)>; rel="next"/.exec(page.response.headers.get('link') ?? '')?.[1] ?? fail('no next link')
const nextPage = Number(new URL(next, base).searchParams.get('page'))
const second = await client.GET('/v1/projects', { params: { query: { filter: 'active', sort: '-name', limit: 2, page: nextPage } } })
if (second.data?.[0]?.name !== 'Typed A') fail('followed next link')
steps.push('listed')

const firstId = second.data[0].id
const one = await client.GET('/v1/projects/{id}', { params: { path: { id: firstId } } })
if (one.data === undefined) fail('get')
const active: boolean = one.data.active
const etag = one.response.headers.get('etag') ?? fail('no ETag')
steps.push(`got (active: ${String(active)})`)

const patched = await client.PATCH('/v1/projects/{id}', { params: { path: { id: firstId }, header: { 'If-Match': etag } }, body: { budget: 20 } })
if (patched.data?.budget !== 20) fail('patch')
const stale = await client.PATCH('/v1/projects/{id}', { params: { path: { id: firstId }, header: { 'If-Match': etag } }, body: { budget: 30 } })
if (stale.error?.status !== 412) fail('stale If-Match')
steps.push('patched')

const missing = await client.GET('/v1/projects/{id}', { params: { path: { id: 987654 } } })
const problem = missing.error ?? fail('expected a problem')
const detail: string = problem.detail
if (problem.status !== 404 || problem.requestId === '') fail('problem')
steps.push(`problem (${detail})`)

const removed = await client.DELETE('/v1/projects/{id}', { params: { path: { id: firstId } } })
if (removed.response.status !== 204) fail('delete')
steps.push('deleted')

if (promised.join() !== 'true,true,false') fail('header presence')
process.stdout.write(`${JSON.stringify(steps)}\n`)
