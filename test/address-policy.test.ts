// The SSRF guard against every IPv6 spelling of a refused IPv4 address, at registration and at connection; no address is ever dialled.
import fc from 'fast-check'
import t from 'tap'
import { AddressPolicy, RefusedUrlError, type Resolve, systemResolve } from '../src/webhooks/address-policy.js'

/** The IPv4 ranges deliveries may not reach (RFC 6890's special-purpose registry and multicast), as [first octets, prefix length]. */
const refusedIPv4: [number[], number][] = [
  [[0], 8], [[10], 8], [[100, 64], 10], [[127], 8], [[169, 254], 16], [[172, 16], 12], [[192, 0, 0], 24], [[192, 0, 2], 24],
  [[192, 168], 16], [[198, 18], 15], [[198, 51, 100], 24], [[203, 0, 113], 24], [[224], 4], [[240], 4]
]

/** An address inside one of the refused ranges, as four octets. */
const refusedAddress = fc.constantFrom(...refusedIPv4).chain(([octets, bits]) => fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map(host => {
  const base = [0, 1, 2, 3].reduce((sum, i) => sum * 256 + (octets[i] ?? 0), 0)
  const value = base + host
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255] as const
}))

const hex = (a: number, b: number) => ((a << 8) | b).toString(16)

/** Every way IPv6 carries an IPv4 address: mapped, compatible, SIIT, NAT64 (well-known and local-use), 6to4, Teredo. */
function ipv6Forms ([a, b, c, d]: readonly [number, number, number, number]): string[] {
  const dotted = `${a}.${b}.${c}.${d}`
  const high = hex(a, b)
  const low = hex(c, d)
  return [
    `::ffff:${dotted}`, `::ffff:${high}:${low}`, `0:0:0:0:0:ffff:${high}:${low}`,
    `::${dotted}`, `::${high}:${low}`, `0:0:0:0:0:0:${high}:${low}`, `0000:0000:0000:0000:0000:0000:${high.padStart(4, '0')}:${low.padStart(4, '0')}`,
    `::ffff:0:${dotted}`,
    `64:ff9b::${dotted}`, `64:ff9b::${high}:${low}`, `64:ff9b:1::${high}:${low}`,
    `2002:${high}:${low}::1`, `2002:${high}:${low}:1::`,
    // Teredo carries the client's address inverted, bit by bit.
    `2001:0:4136:e378:8000:63bf:${(~((a << 8) | b) & 0xffff).toString(16)}:${(~((c << 8) | d) & 0xffff).toString(16)}`,
    `2001::${high}:${low}`
  ]
}

const spelling = fc.tuple(refusedAddress, fc.nat(), fc.boolean()).map(([address, pick, upper]) => {
  const forms = ipv6Forms(address)
  const form = forms[pick % forms.length]!
  return upper ? form.toUpperCase() : form
})

// Registration never resolves an address literal; a test that did would fail here, not dial out.
const noResolver: Resolve = async host => { throw new Error(`asked to resolve ${host}`) }

t.test('at registration every IPv6 spelling of a refused IPv4 address is refused', async t => {
  const policy = new AddressPolicy([], noResolver)
  await fc.assert(fc.asyncProperty(spelling, async form => {
    const error = await policy.check(`https://[${form}]/hooks`).then(() => null, (e: unknown) => e)
    return error instanceof RefusedUrlError
  }), { numRuns: 500 })
  t.pass()
})

t.test('at connection a name resolving to any of them is refused, without naming the address', async t => {
  const url = new URL('https://hooks.example.org/')
  await fc.assert(fc.asyncProperty(spelling, fc.boolean(), async (form, all) => {
    const policy = new AddressPolicy([], async () => [{ address: form, family: 6 }])
    const [error] = await new Promise<unknown[]>(resolve => policy.lookup(url)('hooks.example.org', { all } as never, (...args: unknown[]) => resolve(args)))
    return error instanceof RefusedUrlError && !error.message.toLowerCase().includes(form.toLowerCase())
  }), { numRuns: 300 })
  t.pass()
})

t.test('globally routable addresses still pass, IPv4-mapped ones as the IPv4 they map', async t => {
  const policy = new AddressPolicy([], noResolver)
  for (const address of ['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:93.184.215.14', '93.184.215.14']) {
    await t.resolves(policy.check(`https://${address.includes(':') ? `[${address}]` : address}/hooks`), address)
  }
  const named = new AddressPolicy([], async () => [{ address: '2606:4700:4700::1111', family: 6 }])
  await t.resolves(named.check('https://hooks.example.org/'))
})

t.test('the operator\'s allowlist still admits an address outside 2000::/3', async t => {
  const policy = new AddressPolicy(['::7f00:1'], noResolver)
  await t.resolves(policy.check('http://[::127.0.0.1]:8080/hooks'))
})

t.test('the system resolver answers every address of a name, as written (localhost, from the hosts file: no network)', async t => {
  const found = await systemResolve('localhost')
  t.ok(found.length > 0)
  t.ok(found.every(({ address, family }) => typeof address === 'string' && (family === 4 || family === 6)))
  t.ok(found.some(({ address }) => address === '127.0.0.1' || address === '::1'), 'a loopback address among them')
})
