/**
 * Adding to a response's Vary without losing what another part of the
 * service put there (CORS's `Origin`, the list handler's `Accept-Encoding`,
 * caching's `Authorization, Api-Version`): each names what the answer depends
 * on, and a cache needs all of them.
 */
import type { FastifyReply } from 'fastify'

export function addVary (reply: FastifyReply, added: readonly string[]): void {
  const current = reply.getHeader('vary')
  if (current === undefined) {
    reply.header('vary', added.join(', '))
    return
  }
  const names = typeof current === 'string' ? current.split(',').map(name => name.trim()).filter(Boolean) : []
  for (const name of added) if (!names.some(existing => existing.toLowerCase() === name.toLowerCase())) names.push(name)
  reply.header('vary', names.join(', '))
}
