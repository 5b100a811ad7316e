/**
 * Which addresses an outbound request may reach (architecture.md "Fetching URLs", contract §9.2,
 * §10.2): public unicast only. Everything else, and anything that does not parse as an address,
 * is refused, so a mistake here fails closed.
 */
import { isIP } from 'node:net'

interface Range {
  cidr: string
  reason: string
}

const IPV4_REFUSED: Range[] = [
  { cidr: '0.0.0.0/8', reason: 'this network (0.0.0.0 reaches the local host)' },
  { cidr: '10.0.0.0/8', reason: 'private' },
  { cidr: '100.64.0.0/10', reason: 'shared address space (CGNAT)' },
  { cidr: '127.0.0.0/8', reason: 'loopback' },
  { cidr: '169.254.0.0/16', reason: 'link-local (cloud metadata lives here)' },
  { cidr: '172.16.0.0/12', reason: 'private' },
  { cidr: '192.0.0.0/24', reason: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', reason: 'documentation (TEST-NET-1)' },
  { cidr: '192.168.0.0/16', reason: 'private' },
  { cidr: '198.18.0.0/15', reason: 'benchmarking' },
  { cidr: '198.51.100.0/24', reason: 'documentation (TEST-NET-2)' },
  { cidr: '203.0.113.0/24', reason: 'documentation (TEST-NET-3)' },
  { cidr: '224.0.0.0/4', reason: 'multicast' },
  { cidr: '255.255.255.255/32', reason: 'broadcast' },
  { cidr: '240.0.0.0/4', reason: 'reserved' },
]

const IPV6_REFUSED: Range[] = [
  { cidr: '::/128', reason: 'unspecified' },
  { cidr: '::1/128', reason: 'loopback' },
  // Deprecated IPv4-compatible form (::a.b.c.d): some stacks still map it onto IPv4.
  { cidr: '::/96', reason: 'IPv4-compatible' },
  // Mapped addresses reach IPv4 through a dual-stack socket; a resolver never needs to answer
  // one for a public host, so they are refused whatever the embedded address.
  { cidr: '::ffff:0:0/96', reason: 'IPv4-mapped' },
  { cidr: '64:ff9b:1::/48', reason: 'local-use NAT64' },
  { cidr: '100::/64', reason: 'discard-only' },
  // Teredo and 6to4 embed an IPv4 address that a tunnel endpoint may deliver to.
  { cidr: '2001::/32', reason: 'Teredo' },
  { cidr: '2001:db8::/32', reason: 'documentation' },
  { cidr: '2002::/16', reason: '6to4' },
  { cidr: 'fc00::/7', reason: 'unique local (private)' },
  { cidr: 'fe80::/10', reason: 'link-local' },
  { cidr: 'ff00::/8', reason: 'multicast' },
]

/** NAT64 (RFC 6052): the well-known prefix carries an IPv4 address in its last 32 bits. */
const NAT64 = '64:ff9b::/96'
/** All global unicast IPv6 is allocated from 2000::/3; anything outside it is not public. */
const GLOBAL_UNICAST = '2000::/3'

interface ParsedRange {
  family: 4 | 6
  base: bigint
  bits: number
  reason: string
}

function parseRange({ cidr, reason }: Range): ParsedRange {
  const [address, bits] = cidr.split('/')
  const family = isIP(address) as 4 | 6
  const base = family === 4 ? parseIPv4(address) : parseIPv6(address)
  if (base === null) throw new Error(`bad range ${cidr}`)
  return { family, base, bits: Number(bits), reason }
}

const V4 = IPV4_REFUSED.map(parseRange)
const V6 = IPV6_REFUSED.map(parseRange)
const NAT64_RANGE = parseRange({ cidr: NAT64, reason: 'NAT64' })
const GLOBAL_UNICAST_RANGE = parseRange({ cidr: GLOBAL_UNICAST, reason: 'not global unicast' })

function contains(range: ParsedRange, value: bigint): boolean {
  const shift = BigInt((range.family === 4 ? 32 : 128) - range.bits)
  return value >> shift === range.base >> shift
}

function parseIPv4(text: string): bigint | null {
  if (isIP(text) !== 4) return null
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n)
}

function parseIPv6(text: string): bigint | null {
  if (isIP(text) !== 6) return null
  // A dotted IPv4 tail (`::ffff:1.2.3.4`) is the last two groups written another way.
  const lastColon = text.lastIndexOf(':')
  const v4 = text.includes('.', lastColon) ? parseIPv4(text.slice(lastColon + 1)) : null
  const hex = v4 === null ? text : `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  const [left, right] = hex.split('::')
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => BigInt(`0x${g}`)) : [])
  const l = groups(left)
  const r = groups(right)
  const all = right === undefined ? l : [...l, ...Array<bigint>(8 - l.length - r.length).fill(0n), ...r]
  return all.reduce((acc, g) => (acc << 16n) | g, 0n)
}

/**
 * Why an address may not be reached, or null when it is public unicast. Accepts an address as
 * a resolver answers it or as a URL writes it (`[::1]`, a `%zone` suffix).
 */
export function refusedReason(address: string): string | null {
  const text = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '')
  const v4 = parseIPv4(text)
  if (v4 !== null) return V4.find((r) => contains(r, v4))?.reason ?? null
  const v6 = parseIPv6(text)
  if (v6 === null) return 'not an IP address'
  if (contains(NAT64_RANGE, v6)) {
    const embedded = refusedReason(formatIPv4(v6 & 0xffffffffn))
    return embedded === null ? null : `NAT64 of ${embedded}`
  }
  const named = V6.find((r) => contains(r, v6))
  if (named) return named.reason
  return contains(GLOBAL_UNICAST_RANGE, v6) ? null : GLOBAL_UNICAST_RANGE.reason
}

function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.')
}
