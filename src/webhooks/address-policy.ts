// Which webhook URLs and addresses deliveries may reach (SSRF guard), checked at registration and again at connection.
import { lookup as dnsLookup } from 'node:dns/promises'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'

type Address = ipaddr.IPv4 | ipaddr.IPv6
/** Resolves a host name to every address it has (dns.lookup's answer, so /etc/hosts counts). */
export type Resolve = (hostname: string) => Promise<{ address: string, family: number }[]>

export const systemResolve: Resolve = hostname => dnsLookup(hostname, { all: true, verbatim: true })

/** Parses WEBHOOK_ALLOWED_ADDRESSES' entries (IPs or CIDRs); throws on one that is neither. */
export function parseAllowlist (entries: readonly string[]): [Address, number][] {
  return entries.map(entry => entry.includes('/')
    ? ipaddr.parseCIDR(entry)
    : (address => [address, address.kind() === 'ipv4' ? 32 : 128] as [Address, number])(ipaddr.parse(entry)))
}

/** A URL or address deliveries may not reach; its message says why, for the 400's errors[0].detail. */
export class RefusedUrlError extends Error {
  override name = 'RefusedUrlError'
}

export class AddressPolicy {
  readonly #allowed: [Address, number][]
  readonly #resolve: Resolve

  constructor (allowed: readonly string[], resolve: Resolve = systemResolve) {
    this.#allowed = parseAllowlist(allowed)
    this.#resolve = resolve
  }

  #allowlisted (address: Address): boolean {
    return this.#allowed.some(range => address.kind() === range[0].kind() && address.match(range))
  }

  /**
   * Why `text` may not be reached from `url`, or null. IPv4-mapped IPv6 counts as the IPv4 it maps;
   * only globally routable unicast passes, besides the operator's allowlist, which alone also lifts
   * the https and port rules.
   */
  refusal (url: URL, text: string): string | null {
    const address = ipaddr.process(text)
    if (this.#allowlisted(address)) return null
    const range = address.range()
    if (range !== 'unicast') return `resolves to ${address.toString()}, a ${range} address, which webhooks may not reach`
    if (url.protocol !== 'https:') return 'must be https (plain http only to an address the operator allows)'
    if (url.port !== '' && url.port !== '443' && url.port !== '80') return `names port ${url.port}: only 80 and 443 may be used`
    return null
  }

  /** Throws RefusedUrlError when the URL itself, or any address its host resolves to now, is refused. */
  async check (text: string): Promise<void> {
    const url = URL.canParse(text) ? new URL(text) : null
    if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new RefusedUrlError('must be an https URL')
    if (url.username !== '' || url.password !== '') throw new RefusedUrlError('must not carry credentials (user:password@)')
    if (url.hash !== '' || text.includes('#')) throw new RefusedUrlError('must not have a fragment (#…)')
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    const addresses = ipaddr.isValid(host) ? [host] : await this.#addresses(host)
    for (const address of addresses) {
      const refusal = this.refusal(url, address)
      if (refusal !== null) throw new RefusedUrlError(refusal)
    }
  }

  async #addresses (host: string): Promise<string[]> {
    const found = await this.#resolve(host).catch(() => [])
    if (found.length === 0) throw new RefusedUrlError(`${host} does not resolve`)
    return found.map(a => a.address)
  }

  /**
   * A `lookup` for node:http(s) that refuses a host whose addresses are refused at connection time,
   * so a name that changed its answer since registration (DNS rebinding) still reaches nothing.
   */
  lookup (url: URL): LookupFunction {
    return (hostname, options, callback) => {
      this.#resolve(hostname).then(found => {
        if (found.length === 0) throw new RefusedUrlError(`${hostname} does not resolve`)
        const refused = found.map(a => this.refusal(url, a.address)).find(r => r !== null)
        if (refused !== undefined) throw new RefusedUrlError(refused)
        if (options.all === true) (callback as (e: null, a: typeof found) => void)(null, found)
        else callback(null, found[0]!.address, found[0]!.family)
      }).catch((error: Error) => callback(error as NodeJS.ErrnoException, '', 0))
    }
  }
}
