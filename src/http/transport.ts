/**
 * How the HTTP server listens: TLS (and HTTP/2) when configured, which
 * proxies are believed for X-Forwarded-For / -Proto, and the time bounds that
 * keep slow or idle clients from holding connections.
 */
import proxyAddr from '@fastify/proxy-addr'
import type { Config } from '../config.js'

export interface TlsMaterial {
  readonly cert: string | Buffer
  readonly key: string | Buffer
}

/**
 * TRUST_PROXY → Fastify's trustProxy: never, a hop count, the proxies'
 * addresses / CIDRs / proxy-addr names (loopback, uniquelocal), or everyone.
 * Fastify itself refuses a bare number (a count cannot tell a proxy from a
 * client that adds hops), so a count is a function here: use it only when
 * nothing but the proxies can reach the port; prefer addresses.
 */
export function trustProxy (value: string): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === '') return false
  if (value === 'true') return true
  if (/^[0-9]+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return value.split(',').map(entry => entry.trim()).filter(Boolean)
}

/**
 * What is wrong with TRUST_PROXY's list of proxies, as the library that will
 * read it (Fastify's proxy-addr) says: an entry that is neither an address, a
 * CIDR nor a name such as loopback. Undefined when it can be used.
 */
export function trustProxyFault (value: string): string | undefined {
  const proxies = trustProxy(value)
  if (!Array.isArray(proxies)) return undefined
  try {
    proxyAddr.compile(proxies)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

/** Node checks header and request deadlines on this interval; its 30 s default lets slow clients linger. */
const DEADLINE_CHECK_MS = 1000

export function transportOptions (config: Config, tls: TlsMaterial | undefined): Record<string, unknown> {
  const server = {
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval: DEADLINE_CHECK_MS,
    // Node's refusal of a request without Host is an empty 400 sent below every hook: host-header.ts refuses it instead.
    requireHostHeader: false
  }
  return {
    trustProxy: trustProxy(config.trustProxy),
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // The same bound for an idle HTTP/2 session (Fastify's default is 72 s).
    http2SessionTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    ...(tls === undefined
      ? { http: server }
      : config.http2 === '1'
        ? { http2: true, https: { ...tls, allowHTTP1: true, ...server } }
        : { https: { ...tls, ...server } })
  }
}
