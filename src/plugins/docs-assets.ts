/**
 * The documentation UI's scripts and style sheets, served as kept bodies
 * (published-document.ts): read and tagged at their first request, each coding
 * made once. @fastify/static, which swagger-ui serves its folder with, streams
 * every request's file through @fastify/compress, which brotli-coded the
 * 1.5 MB bundle anew each time: about 100 ms of CPU a request on a public
 * route, where ten connections asking for it took the process to 260 MB and
 * held the thread pool that the token endpoint's scrypt shares (and the log's
 * writes did then).
 * Binary files (the icons) and swagger-ui's own routes are left to it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, extname, join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { publishedDocument } from '../http/published-document.js'

/** The text assets kept, by extension, with the type @fastify/static gave them. */
const KEPT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8'
}

/** The folder swagger-ui serves at `{prefix}/static/`. */
function swaggerUiStaticFolder (): string {
  return join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static')
}

/** Routes `{prefix}/static/{file}` for every script and style sheet of swagger-ui's, ahead of its own static route. */
export function keptDocsAssets (app: FastifyInstance, prefix: string): void {
  const folder = swaggerUiStaticFolder()
  for (const file of readdirSync(folder)) {
    const type = KEPT_TYPES[extname(file)]
    if (type === undefined) continue
    app.get(`${prefix}/static/${file}`, { schema: { hide: true } }, publishedDocument(type, () => readFileSync(join(folder, file))))
  }
}
