/**
 * Registers the strict JSON parsers in place of Fastify's defaults (whose
 * text/plain parser would turn a mislabelled JSON body into a string), and
 * holds each route to the media types it declares in `config.accepts`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { UnsupportedMediaType } from '../errors.js'
import { JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE, parseJsonBody } from '../http/json-body.js'
import { addRouteHook } from '../http/route-hooks.js'

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
  // Only routes that declare the media types they accept check them.
  app.addHook('onRoute', function checkDeclaredMediaTypes (route) {
    const accepts = route.config?.accepts
    if (accepts === undefined) return
    addRouteHook(route, 'preValidation', function checkMediaType (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
      const type = mediaTypeOf(request.headers['content-type'])
      if (request.body === undefined || accepts.includes(type)) done()
      else done(new UnsupportedMediaType(`${request.method} here accepts ${accepts.join(' or ')}, not ${type || 'a body without Content-Type'}`))
    })
  })
}

export default fp(jsonBody, { name: 'resourcery-json-body' })
