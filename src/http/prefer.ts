/**
 * The `Prefer` request header (RFC 7240), as far as the service honours it.
 */
import type { FastifyRequest } from 'fastify'

/** `Prefer: return=minimal` (RFC 7240) asks for no body on a successful write. */
export function prefersMinimal (request: FastifyRequest): boolean {
  const prefer = request.headers.prefer
  return typeof prefer === 'string' && /(^|[,;\s])return\s*=\s*"?minimal"?(?=$|[,;\s])/i.test(prefer)
}
