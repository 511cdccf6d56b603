/**
 * What the collection tests share: eight projects whose names, budgets and
 * flags exercise every sort and filter, the order the contract promises for
 * them, and a walk through a list's pages by its Link header.
 */
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { body, buildTestApp, post, type Json } from '../helper.js'

export const PROJECTS: Json[] = [
  { name: 'road works', budget: 300, active: true },
  { name: 'Road signs', budget: 100, active: false },
  { name: 'bridge', active: true },
  { name: 'Zebra crossing', budget: 300, active: true },
  { name: 'ämter', budget: 50, active: false },
  { name: '100%_done', budget: 0, active: true },
  { name: 'Tunnel', active: true },
  { name: 'alley', budget: 300, active: false }
]

export async function seed (t: Test): Promise<{ app: FastifyInstance, projects: Json[] }> {
  const app = await buildTestApp(t)
  const projects: Json[] = []
  for (const fields of PROJECTS) projects.push(body(await post(app, '/v1/projects', fields)))
  return { app, projects }
}

export const get = async (app: FastifyInstance, url: string) => await app.inject({ method: 'GET', url })

/** Link header → { rel: target }. */
export function links (header: string | string[] | number | undefined): Record<string, string> {
  const result: Record<string, string> = {}
  for (const part of String(header ?? '').split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>;\s*rel="([^"]+)"$/.exec(part.trim())
    if (match !== null) result[match[2]!] = match[1]!
  }
  return result
}

type Key = { field: string, desc: boolean }

/** The order the contract promises: missing values last either way, code-point strings, ties by id in the last key's direction. */
export function expectedOrder (items: Json[], sort: string): number[] {
  let keys: Key[]
  if (sort === 'asc' || sort === 'desc') keys = [{ field: 'id', desc: sort === 'desc' }]
  else {
    keys = sort.split(',').map(token => {
      const [name, direction] = token.replace(/^-/, '').split(':')
      return { field: name!, desc: token.startsWith('-') || direction === 'desc' }
    })
    if (!keys.some(key => key.field === 'id')) keys.push({ field: 'id', desc: keys.at(-1)!.desc })
  }
  const compare = (a: Json, b: Json): number => {
    for (const { field, desc } of keys) {
      const x = a[field]
      const y = b[field]
      if (x === y) continue
      if (x === undefined) return 1
      if (y === undefined) return -1
      const order = x < y ? -1 : 1
      return desc ? -order : order
    }
    return 0
  }
  return [...items].sort(compare).map(item => item.id)
}

export async function walkPages (app: FastifyInstance, first: string): Promise<number[]> {
  const ids: number[] = []
  let url: string | undefined = first
  for (let guard = 0; url !== undefined && guard < 100; guard++) {
    const response = await get(app, url)
    if (response.statusCode !== 200) throw new Error(`${url}: ${response.body}`)
    ids.push(...body(response).map((item: Json) => item.id))
    url = links(response.headers.link).next
  }
  return ids
}
