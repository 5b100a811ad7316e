/**
 * The address guard of shared/platform/fetch.ts (architecture.md "Fetching URLs", contract §9.2,
 * §10.2, §15): every non-public range is refused, however the address is written, and the
 * allow-list matches the host as written. The ranges below are listed here, not read
 * from ip-ranges.ts, so that a range dropped there fails this test.
 * No request leaves the process: literal hosts are never resolved, names use a fake resolver.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { checkUrl, FetchError, type ResolveHost } from '../../shared/platform/fetch'
import { refusedReason } from '../../shared/platform/ip-ranges'

const isPublicAddress = (address: string) => refusedReason(address) === null

const REFUSED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '255.255.255.255/32',
]
const REFUSED_V6 = [
  '::/128',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
  '::ffff:0:0/96',
  '2001:db8::/32',
  '100::/64',
  // IPv4-compatible, local-use NAT64, Teredo and 6to4 addresses can all lead to IPv4.
  '::/96',
  '64:ff9b:1::/48',
  '2001::/32',
  '2002::/16',
]

const v4ToInt = (s: string) => s.split('.').reduce((acc, p) => acc * 256 + Number(p), 0)
const intToV4 = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.')
const v6ToBig = (s: string) => {
  const [l, r = ''] = s.split('::')
  const left = l ? l.split(':') : []
  const right = r ? r.split(':') : []
  const groups = s.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(`0x${g}`), 0n)
}
/** Uncompressed, so the module's parser gets no help from a canonical form. */
const bigToV6 = (n: bigint) => Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':')

function v4In(cidr: string): fc.Arbitrary<number> {
  const [base, bits] = cidr.split('/')
  const size = 2 ** (32 - Number(bits))
  const start = v4ToInt(base) - (v4ToInt(base) % size)
  return fc.integer({ min: 0, max: size - 1 }).map((offset) => start + offset)
}
function v6In(cidr: string): fc.Arbitrary<bigint> {
  const [base, bits] = cidr.split('/')
  const hostBits = 128n - BigInt(bits)
  return fc.bigInt({ min: 0n, max: (1n << hostBits) - 1n }).map((offset) => ((v6ToBig(base) >> hostBits) << hostBits) | offset)
}
const inV4 = (n: number, cidr: string) => {
  const [base, bits] = cidr.split('/')
  const size = 2 ** (32 - Number(bits))
  return Math.floor(n / size) === Math.floor(v4ToInt(base) / size)
}
const inV6 = (n: bigint, cidr: string) => {
  const [base, bits] = cidr.split('/')
  const hostBits = 128n - BigInt(bits)
  return n >> hostBits === v6ToBig(base) >> hostBits
}

const refusedV4 = fc.constantFrom(...REFUSED_V4).chain(v4In)
const publicV4 = fc.integer({ min: 0, max: 2 ** 32 - 1 }).filter((n) => !REFUSED_V4.some((c) => inV4(n, c)))

/** Ways the WHATWG URL parser accepts to write an IPv4 host, all meaning the same address. */
function spellings(n: number): string[] {
  const [a, b, c, d] = intToV4(n).split('.').map(Number)
  return [
    intToV4(n),
    String(n),
    `0x${n.toString(16)}`,
    `0${n.toString(8)}`,
    [a, b, c, d].map((p) => `0x${p.toString(16)}`).join('.'),
    [a, b, c, d].map((p) => `0${p.toString(8)}`).join('.'),
    `${a}.${b}.${c * 256 + d}`,
    `${a}.${b * 65536 + c * 256 + d}`,
    `0x${a.toString(16)}.${b}.0${(c * 256 + d).toString(8)}`,
    `${intToV4(n)}.`,
  ]
}

const noResolver: ResolveHost = () => {
  throw new Error('a literal host must not be resolved')
}
const resolverFor =
  (answers: Record<string, string[]>): ResolveHost =>
  async (host) =>
    answers[host] ?? []

/** `resolve: 'system'` uses the module's default (node:dns). */
async function codeOf(url: string, allowHosts: string[] = [], resolve: ResolveHost | 'system' = noResolver): Promise<string> {
  try {
    await checkUrl(url, { allowHosts, resolve: resolve === 'system' ? undefined : resolve })
    return 'ok'
  } catch (e) {
    if (e instanceof FetchError) return e.code
    throw e
  }
}

describe('refused address ranges', () => {
  test('every address of every refused IPv4 range is refused', () => {
    fc.assert(
      fc.property(refusedV4, (n) => refusedReason(intToV4(n)) !== null),
      { numRuns: 2000 },
    )
  })

  test('IPv4 outside those ranges is public', () => {
    fc.assert(
      fc.property(publicV4, (n) => isPublicAddress(intToV4(n))),
      { numRuns: 2000 },
    )
  })

  test('every address of every refused IPv6 range is refused, written in full or compressed', () => {
    fc.assert(
      fc.property(fc.constantFrom(...REFUSED_V6).chain(v6In), (n) => {
        const full = bigToV6(n)
        const compressed = new URL(`http://[${full}]/`).hostname
        return refusedReason(full) !== null && refusedReason(compressed) !== null && refusedReason(full.toUpperCase()) !== null
      }),
      { numRuns: 2000 },
    )
  })

  test('IPv6 outside global unicast (2000::/3) is refused', () => {
    const outside = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }).filter((n) => n >> 125n !== 1n && !inV6(n, '64:ff9b::/96'))
    fc.assert(
      fc.property(outside, (n) => refusedReason(bigToV6(n)) !== null),
      { numRuns: 2000 },
    )
  })

  test('global unicast IPv6 outside the refused ranges is public', () => {
    const global = v6In('2000::/3').filter((n) => !REFUSED_V6.some((c) => inV6(n, c)))
    fc.assert(
      fc.property(global, (n) => isPublicAddress(bigToV6(n))),
      { numRuns: 2000 },
    )
  })

  test('IPv4-mapped IPv6 is refused whatever it embeds, in dotted and hex forms', () => {
    fc.assert(
      fc.property(fc.oneof(refusedV4, publicV4), (n) => {
        const hex = `::ffff:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
        return refusedReason(`::ffff:${intToV4(n)}`) !== null && refusedReason(hex) !== null && refusedReason(`[${hex}]`) !== null
      }),
    )
  })

  test('NAT64 (64:ff9b::/96) is judged by the IPv4 address it embeds', () => {
    fc.assert(fc.property(refusedV4, (n) => refusedReason(`64:ff9b::${intToV4(n)}`) !== null))
    fc.assert(fc.property(publicV4, (n) => isPublicAddress(`64:ff9b::${intToV4(n)}`)))
  })

  test('zone ids and non-addresses', () => {
    expect(refusedReason('fe80::1%eth0')).toBe('link-local')
    expect(isPublicAddress('localhost')).toBe(false)
    expect(isPublicAddress('')).toBe(false)
    expect(isPublicAddress('127.1')).toBe(false)
    expect(isPublicAddress('93.184.215.14')).toBe(true)
    expect(isPublicAddress('2606:4700:4700::1111')).toBe(true)
  })
})

describe('literal hosts in URLs', () => {
  test('the URL parser turns every IPv4 spelling into dotted decimal (what the guard relies on)', () => {
    for (const [written, host] of [
      ['2130706433', '127.0.0.1'],
      ['0x7f.1', '127.0.0.1'],
      ['127.1', '127.0.0.1'],
      ['0177.0.0.1', '127.0.0.1'],
      ['0', '0.0.0.0'],
      ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]'],
      ['[0:0:0:0:0:0:0:1]', '[::1]'],
    ]) {
      expect(new URL(`http://${written}/`).hostname).toBe(host)
    }
  })

  test('a refused IPv4 address is refused however it is written, without a DNS lookup', async () => {
    await fc.assert(
      fc.asyncProperty(refusedV4, fc.nat(9), async (n, pick) => {
        const written = spellings(n)[pick]
        expect({ written, code: await codeOf(`http://${written}:8080/x`) }).toEqual({ written, code: 'url_not_allowed' })
      }),
      { numRuns: 500 },
    )
  })

  test('a public IPv4 address passes however it is written', async () => {
    await fc.assert(
      fc.asyncProperty(publicV4, fc.nat(9), async (n, pick) => {
        const written = spellings(n)[pick]
        expect({ written, code: await codeOf(`https://${written}/`) }).toEqual({ written, code: 'ok' })
      }),
      { numRuns: 500 },
    )
  })

  test('refused IPv6 literals, bracketed as URLs write them', async () => {
    for (const host of [
      '[::1]',
      '[::]',
      '[0:0:0:0:0:0:0:1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:a9fe:a9fe]',
      '[64:ff9b::10.0.0.1]',
      '[fd00::2]',
      '[fe80::1]',
      '[ff02::1]',
      '[2001:db8::1]',
      '[100::1]',
    ]) {
      expect({ host, code: await codeOf(`http://${host}/`) }).toEqual({ host, code: 'url_not_allowed' })
    }
    expect(await codeOf('http://[2606:4700:4700::1111]/')).toBe('ok')
  })

  test('only absolute http and https URLs', async () => {
    for (const url of [
      'ftp://example.com/',
      'file:///etc/passwd',
      'gopher://127.0.0.1/',
      'data:text/plain,x',
      'not a url',
      '/relative',
      'http://256.1.1.1/',
      'http://[fe80::1%25eth0]/',
    ]) {
      expect({ url, code: await codeOf(url) }).toEqual({ url, code: 'bad_url' })
    }
  })
})

describe('host names', () => {
  test('a name is refused when any of its addresses is not public', async () => {
    const resolve = resolverFor({
      'mixed.example': ['93.184.215.14', '10.0.0.1'],
      'v6.example': ['2606:4700::1', 'fd00::1'],
      'fine.example': ['93.184.215.14', '2606:4700::1'],
    })
    expect(await codeOf('http://mixed.example/', [], resolve)).toBe('url_not_allowed')
    expect(await codeOf('http://v6.example/', [], resolve)).toBe('url_not_allowed')
    expect(await codeOf('http://fine.example/', [], resolve)).toBe('ok')
  })

  test('a name that does not resolve is a connection failure, not a refusal', async () => {
    expect(await codeOf('http://nowhere.example/', [], resolverFor({}))).toBe('connection_failed')
    const failing: ResolveHost = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })
    }
    expect(await codeOf('http://nowhere.example/', [], failing)).toBe('connection_failed')
  })

  test('localhost through the system resolver is refused', async () => {
    expect(await codeOf('http://localhost:3000/', [], 'system')).toBe('url_not_allowed')
  })
})

describe('allow-list: the host as written, never a resolved address (contract §15)', () => {
  test('with 127.0.0.1 allowed, localhost, [::1] and 0.0.0.0 stay refused', async () => {
    const allow = ['127.0.0.1']
    expect(await codeOf('http://127.0.0.1:8080/', allow)).toBe('ok')
    expect(await codeOf('http://localhost:8080/', allow, resolverFor({ localhost: ['127.0.0.1'] }))).toBe('url_not_allowed')
    expect(await codeOf('http://localhost:8080/', allow, 'system')).toBe('url_not_allowed')
    expect(await codeOf('http://[::1]:8080/', allow)).toBe('url_not_allowed')
    expect(await codeOf('http://0.0.0.0:8080/', allow)).toBe('url_not_allowed')
    expect(await codeOf('http://127.0.0.2:8080/', allow)).toBe('url_not_allowed')
    expect(await codeOf('http://[::ffff:127.0.0.1]:8080/', allow)).toBe('url_not_allowed')
    // The URL parser has made these 127.0.0.1 before any lookup: the same host, not a resolution.
    expect(await codeOf('http://2130706433:8080/', allow)).toBe('ok')
    expect(await codeOf('http://0x7f.1:8080/', allow)).toBe('ok')
  })

  test('a name is allowed by its own entry, whatever it resolves to, and its address allows no other name', async () => {
    const resolve = resolverFor({ 'images.internal': ['10.0.0.1'], 'other.internal': ['10.0.0.1'], 'a.images.internal': ['10.0.0.1'] })
    expect(await codeOf('http://images.internal/', ['images.internal'], resolve)).toBe('ok')
    expect(await codeOf('http://other.internal/', ['images.internal', '10.0.0.1'], resolve)).toBe('url_not_allowed')
    expect(await codeOf('http://a.images.internal/', ['images.internal'], resolve)).toBe('url_not_allowed')
  })

  test('matching is case-insensitive; IPv6 entries are written as in a URL', async () => {
    const resolve = resolverFor({ 'images.internal': ['10.0.0.1'] })
    expect(await codeOf('http://IMAGES.Internal/', [' Images.INTERNAL '], resolve)).toBe('ok')
    expect(await codeOf('http://[::1]:9/', ['[::1]'])).toBe('ok')
    expect(await codeOf('http://[0:0::1]:9/', ['[::1]'])).toBe('ok')
  })

  test('property: a refused address is reached exactly when the URL host is listed', async () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/)
    await fc.assert(
      fc.asyncProperty(label, label, refusedV4, fc.boolean(), fc.boolean(), async (host, other, n, listed, upper) => {
        fc.pre(host !== other)
        const name = `${host}.example`
        const resolve = resolverFor({ [name]: [intToV4(n)] })
        const allow = [listed ? (upper ? name.toUpperCase() : name) : `${other}.example`, intToV4(n)]
        expect(await codeOf(`http://${upper ? name : name.toUpperCase()}/`, allow, resolve)).toBe(listed ? 'ok' : 'url_not_allowed')
      }),
      { numRuns: 300 },
    )
  })
})
