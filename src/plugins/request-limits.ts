/**
 * Bounds on what one request may ask of the service beyond its body: the
 * length of the query string and the number of its parameters. (Body size,
 * JSON depth and array lengths are bounded by the parser and the schemas;
 * header size and time by the HTTP server.)
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { invalid, UriTooLong } from '../errors.js'

export const MAX_QUERY_LENGTH = 4096
export const MAX_QUERY_PARAMETERS = 64

async function requestLimits (app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async function boundQuery (request: FastifyRequest) {
    const url = request.raw.url ?? ''
    const start = url.indexOf('?')
    if (start === -1) return
    const query = url.slice(start + 1)
    if (query.length > MAX_QUERY_LENGTH) throw new UriTooLong(`the query string is longer than ${MAX_QUERY_LENGTH} characters`)
    const parameters = query.split('&').filter(Boolean).length
    if (parameters > MAX_QUERY_PARAMETERS) {
      throw invalid([{ in: 'query', pointer: '', detail: `has ${parameters} parameters; at most ${MAX_QUERY_PARAMETERS} are accepted` }])
    }
  })
}

export default fp(requestLimits, { name: 'resourcery-request-limits' })
