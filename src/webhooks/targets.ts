/**
 * Where a webhook may be sent. Addresses on loopback, private, link-local
 * (cloud metadata: 169.254.169.254, fd00:ec2::254), carrier-grade NAT,
 * multicast or reserved ranges are refused, after DNS and on every delivery,
 * and the request goes to exactly the address that was checked, so a name
 * that changes its answer (DNS rebinding) cannot reach them either.
 */
import type { LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { boundedLookup, LookupFailed, type LookupBounds } from './bounded-lookup.js'

const blocked = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 3]
] as const) blocked.addSubnet(network, prefix, 'ipv4')
// ::/96 holds the unspecified address, loopback and the deprecated IPv4-compatible form (::7f00:1).
for (const [network, prefix] of [
  ['::', 96], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['100::', 64]
] as const) blocked.addSubnet(network, prefix, 'ipv6')

/** An IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is. */
export function isPrivateAddress (address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  if (mapped !== undefined) return blocked.check(mapped, 'ipv4')
  const family = isIP(address)
  if (family === 0) return true
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

export class TargetRefused extends Error {
  override name = 'TargetRefused'
}

/**
 * A name that has no address now. At delivery that is a failed attempt, retried;
 * at registration it is no reason to refuse, since DNS may not be set up yet, and
 * every delivery resolves the name again before it sends anything.
 */
export class TargetUnresolved extends TargetRefused {
  override name = 'TargetUnresolved'
}

export interface ResolvedTarget {
  readonly address: string
  readonly family: 4 | 6
}

export interface TargetRules extends LookupBounds {
  /** Private, loopback and reserved addresses are allowed (WEBHOOK_ALLOW_PRIVATE). */
  readonly allowPrivate: boolean
}

/**
 * The name's addresses, within the rules' deadline (WEBHOOK_TIMEOUT_MS): a
 * resolver that does not answer held a whole round of deliveries, a stop, and
 * an admin's registration for its own time-outs, tens of seconds.
 */
async function addressesOf (host: string, rules: TargetRules): Promise<LookupAddress[]> {
  try {
    return await boundedLookup(host, rules)
  } catch (error) {
    if (error instanceof LookupFailed) throw new TargetUnresolved(`${host} ${error.message}`)
    throw error
  }
}

/** The address to send to, or TargetRefused saying why not. */
export async function resolveTarget (url: URL, rules: TargetRules): Promise<ResolvedTarget> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRefused(`${url.protocol} URLs are not supported; use https`)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(host) === 0 ? await addressesOf(host, rules) : [{ address: host, family: isIP(host) }]
  const { allowPrivate } = rules
  if (!allowPrivate) {
    const refused = addresses.find(({ address }) => isPrivateAddress(address))
    if (refused !== undefined) throw new TargetRefused(`${host} resolves to ${refused.address}, a loopback, private, link-local or reserved address`)
  }
  const first = addresses[0]
  if (first === undefined) throw new TargetUnresolved(`${host} has no address`)
  return { address: first.address, family: first.family === 6 ? 6 : 4 }
}
