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

/** The `charset` parameter of a Content-Type, lower-cased and unquoted; undefined when there is none. */
function charsetOf (header: string | undefined): string | undefined {
  for (const parameter of (header ?? '').split(';').slice(1)) {
    const [name, value] = parameter.split('=')
    if (name?.trim().toLowerCase() === 'charset') return (value ?? '').trim().replace(/^"(.*)"$/, '$1').toLowerCase()
  }
  return undefined
}

/** Charsets a JSON body may be labelled with: UTF-8, and ASCII, whose text UTF-8 reads the same. */
const UTF8_READABLE = new Set(['utf-8', 'utf8', 'us-ascii'])

/**
 * JSON is UTF-8 (RFC 8259 §8.1). A body labelled with another charset would
 * be read as UTF-8 all the same, so any text in it could change without a
 * word: it is refused instead.
 */
function foreignCharset (header: string | undefined): Error | undefined {
  const charset = charsetOf(header)
  if (charset === undefined || UTF8_READABLE.has(charset)) return undefined
  return new UnsupportedMediaType(`JSON is read as UTF-8 (RFC 8259 §8.1); send it as UTF-8 and label it so, or without a charset, not charset=${charset.slice(0, 40)}`)
}

async function jsonBody (app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers()
  for (const type of [JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE]) {
    app.addContentTypeParser(type, { parseAs: 'buffer' }, function parseJson (request, body, done) {
      const refusal = foreignCharset(request.headers['content-type'])
      if (refusal !== undefined) {
        done(refusal, undefined)
        return
      }
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
