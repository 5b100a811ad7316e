/**
 * The client address a publishable key's per-address limit counts (contract §16.4): the
 * connection's peer, or with `TRUST_PROXY_HOPS=N` the N-th address from the right of
 * `X-Forwarded-For` (what the N-th proxy in front of us saw; anything further left was written by
 * the client and proves nothing). An IPv6 client is counted by its /64: one host usually holds a
 * whole /64, so counting single addresses would let it step around the limit.
 */
import { isIP } from 'node:net'

/** Where nothing names the client (a request handed to the app without a socket: tests, tools). */
export const UNKNOWN_ADDRESS = 'unknown'

/** `peer` is asked only when `X-Forwarded-For` does not decide: Bun's `requestIP` costs microseconds a call. */
export function clientAddress(forwardedFor: string | null, peer: () => string | undefined, hops: number): string {
  let address: string | undefined
  if (hops > 0 && forwardedFor) {
    const chain = forwardedFor
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    // Fewer entries than proxies: the leftmost is still one a trusted proxy wrote.
    const candidate = chain.length >= hops ? chain[chain.length - hops] : chain[0]
    if (candidate && isIP(stripBrackets(candidate))) address = stripBrackets(candidate)
  }
  address ??= peer()
  return address ? bucket(address) : UNKNOWN_ADDRESS
}

const stripBrackets = (s: string) => (s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s)

/** IPv4 as it is (an IPv4-mapped IPv6 address included); IPv6 as its /64 (`2001:db8:1:2::/64`). */
export function bucket(address: string): string {
  // No colon: an IPv4 address (every IPv6 form has one), counted as it is.
  if (!address.includes(':')) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]
  if (isIP(address) !== 6) return address
  const [head, tail = ''] = address.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = address.includes('::') ? (tail ? tail.split(':') : []) : []
  // An embedded IPv4 tail fills two groups; only the first four groups matter here.
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}
