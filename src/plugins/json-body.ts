/**
 * Registers the strict JSON parsers in place of Fastify's defaults (whose
 * text/plain parser would turn a mislabelled JSON body into a string), and
 * holds each route to the media types it declares in `config.accepts`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { UnsupportedMediaType } from '../errors.js'
import { JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE, parseJsonBody } from '../http/json-body.js'

const mediaTypeOf = (header: string | undefined): string =>
  (header ?? '').split(';')[0]!.trim().toLowerCase()

async function jsonBody (app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers()
  for (const type of [JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE]) {
    app.addContentTypeParser(type, { parseAs: 'buffer' }, function parseJson (_request, body, done) {
      let value: unknown
      try {
        value = parseJsonBody(body as Buffer)
      } catch (error) {
        done(error as Error, undefined)
        return
      }
      done(null, value)
    })
  }
  app.addHook('preValidation', async function checkMediaType (request: FastifyRequest) {
    const accepts = request.routeOptions.config?.accepts
    if (accepts === undefined || request.body === undefined) return
    const type = mediaTypeOf(request.headers['content-type'])
    if (!accepts.includes(type)) {
      throw new UnsupportedMediaType(`${request.method} here accepts ${accepts.join(' or ')}, not ${type || 'a body without Content-Type'}`)
    }
  })
}

export default fp(jsonBody, { name: 'resourcery-json-body' })
