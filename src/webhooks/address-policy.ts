// Which webhook URLs and addresses deliveries may reach (SSRF guard), checked at registration and again at connection.
import { lookup as dnsLookup } from 'node:dns/promises'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { type Address, parseAllowlist } from '../domain/addresses.js'

/** Resolves a host name to every address it has (dns.lookup's answer, so /etc/hosts counts). */
export type Resolve = (hostname: string) => Promise<{ address: string, family: number }[]>

export const systemResolve: Resolve = hostname => dnsLookup(hostname, { all: true, verbatim: true })

/**
 * The only IPv6 addresses routed on the internet (RFC 4291 §2.4, IANA's global unicast allocation). Every
 * embedding of an IPv4 address outside it (IPv4-compatible `::a.b.c.d`, which the URL parser writes as
 * `::7f00:1`; NAT64 `64:ff9b::/96`; SIIT `::ffff:0:a.b.c.d`) is refused with it; the embeddings inside it,
 * 6to4 (2002::/16) and Teredo (2001::/32), are among the special ranges ipaddr.js classes as other than unicast.
 */
const globalUnicast = ipaddr.parseCIDR('2000::/3')

/** Whether deliveries may reach `address` (IPv4-mapped IPv6 already read as its IPv4). */
function routable (address: Address): boolean {
  if (address.range() !== 'unicast') return false
  return address.kind() === 'ipv4' || address.match(globalUnicast)
}

/** A URL or address deliveries may not reach; its message says why, for the 400's errors[0].detail. */
export class RefusedUrlError extends Error {
  override name = 'RefusedUrlError'
}

const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1')

/**
 * Why a host name is refused, the same whether it does not resolve or resolves to an address webhooks may
 * not reach: telling them apart would let a caller map which internal names exist.
 */
const unreachable = (url: URL): string => `${url.hostname} does not resolve to a public address webhooks may reach${operatorMayAllow}`

/** Said with every address refusal: the operator's allowlist is public knowledge (docs/changes.md), and the way to try webhooks on one machine. */
const operatorMayAllow = ' (unless the operator allows it in WEBHOOK_ALLOWED_ADDRESSES: docs/changes.md, "Try it on one machine")'

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
   * the https and port rules. An address the host name resolved to is never named (nor its range):
   * the answer would tell a caller how internal names resolve.
   */
  refusal (url: URL, text: string): string | null {
    const address = ipaddr.process(text)
    if (this.#allowlisted(address)) return null
    if (!routable(address)) {
      if (!ipaddr.isValid(hostOf(url))) return unreachable(url)
      const range = address.range()
      // The caller wrote this address: naming its range tells them nothing new.
      return `${url.hostname} is ${range === 'unicast' ? 'not a globally routable' : `a ${range}`} address, which webhooks may not reach${operatorMayAllow}`
    }
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
    const host = hostOf(url)
    const addresses = ipaddr.isValid(host) ? [host] : await this.#addresses(url)
    for (const address of addresses) {
      const refusal = this.refusal(url, address)
      if (refusal !== null) throw new RefusedUrlError(refusal)
    }
  }

  async #addresses (url: URL): Promise<string[]> {
    const found = await this.#resolve(url.hostname).catch(() => [])
    if (found.length === 0) throw new RefusedUrlError(unreachable(url))
    return found.map(a => a.address)
  }

  /**
   * A `lookup` for node:http(s) that refuses a host whose addresses are refused at connection time,
   * so a name that changed its answer since registration (DNS rebinding) still reaches nothing.
   */
  lookup (url: URL): LookupFunction {
    return (hostname, options, callback) => {
      this.#resolve(hostname).then(found => {
        if (found.length === 0) throw new RefusedUrlError(unreachable(url))
        const refused = found.map(a => this.refusal(url, a.address)).find(r => r !== null)
        if (refused !== undefined) throw new RefusedUrlError(refused)
        if (options.all === true) (callback as (e: null, a: typeof found) => void)(null, found)
        else callback(null, found[0]!.address, found[0]!.family)
      }).catch((error: Error) => callback(error as NodeJS.ErrnoException, '', 0))
    }
  }
}
