// IP addresses and ranges as operators write them (WEBHOOK_ALLOWED_ADDRESSES): read once at start, matched by the webhooks' address policy.
import ipaddr from 'ipaddr.js'

export type Address = ipaddr.IPv4 | ipaddr.IPv6

/** Parses allowlist entries (IPs or CIDRs) into ranges; throws on one that is neither. */
export function parseAllowlist (entries: readonly string[]): [Address, number][] {
  return entries.map(entry => entry.includes('/')
    ? ipaddr.parseCIDR(entry)
    : (address => [address, address.kind() === 'ipv4' ? 32 : 128] as [Address, number])(ipaddr.parse(entry)))
}
