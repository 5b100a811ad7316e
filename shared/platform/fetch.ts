/**
 * Outbound HTTP to URLs that customers give us (architecture.md "Fetching URLs"): image imports
 * (contract §9.2) and webhook deliveries (§10.2). A URL could name our own network (cloud
 * metadata at 169.254.169.254, the database, Redis), so every hop is resolved here, every
 * address it resolves to must be public (ip-ranges.ts), and the connection goes to the address
 * that was checked: the URL handed to Bun's fetch carries the IP literal, so no second DNS lookup
 * happens that a rebinding name server could answer differently. The host name still travels
 * in the `Host` header and as the TLS server name, so certificates are verified against it.
 *
 * Operators allow hosts explicitly (IMAGE_IMPORT_ALLOW_HOSTS, WEBHOOK_ALLOW_HOSTS; callers pass
 * them from config). An entry matches the URL's host as written, never a resolved address
 * (contract §15): with `127.0.0.1` allowed, `localhost`, `[::1]` and `0.0.0.0` stay refused.
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { refusedReason } from './ip-ranges'

export type FetchErrorCode =
  | 'bad_url' // not an absolute http(s) URL (also a redirect's Location)
  | 'url_not_allowed' // the host is, or resolves to, a non-public address and is not allowed
  | 'connection_failed' // the host did not resolve, or no connection or TLS session could be made
  | 'timeout' // the whole exchange (every hop, DNS and the body) outlasted timeoutMs
  | 'too_large' // the body is longer than maxBytes
  | 'too_many_redirects' // more than maxRedirects redirects

export class FetchError extends Error {
  override name = 'FetchError'
  constructor(
    readonly code: FetchErrorCode,
    /** The URL of the hop that failed (after redirects, the last one). */
    readonly url: string,
    detail: string,
    options: { cause?: unknown } = {},
  ) {
    super(`${code}: ${detail}`, options)
  }
}

/** A host name's addresses (IPv4 or IPv6 text). Injectable so tests can play a rebinding DNS. */
export type ResolveHost = (host: string) => Promise<string[]>

export const resolveWithSystem: ResolveHost = async (host) => (await lookup(host, { all: true, order: 'verbatim' })).map((a) => a.address)

export interface GuardOptions {
  /** Hosts reached without the address check, compared with the URL's host as written. */
  allowHosts: readonly string[]
  resolve?: ResolveHost
}

export interface SafeFetchOptions extends GuardOptions {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string | Uint8Array
  /** For the whole exchange: every hop, DNS included, and reading the body. */
  timeoutMs: number
  /** Longest body accepted; reading stops as soon as it is passed. */
  maxBytes: number
  /** 0: a 3xx is returned as it is, never followed. */
  maxRedirects: number
  /** false: the body is not read (the connection is closed) and `body` is empty. */
  readBody?: boolean
}

export interface SafeFetchResponse {
  status: number
  headers: Headers
  body: Uint8Array
  /** The URL that answered (after redirects). */
  url: string
  redirects: number
}

/** Contract §9.2: timeout 30 s, at most 25 MiB, at most 5 redirects. */
export const IMAGE_IMPORT_LIMITS = { timeoutMs: 30_000, maxBytes: 25 * 1024 * 1024, maxRedirects: 5 } as const
/**
 * Contract §10.2: a 2xx within 10 s (WEBHOOK_TIMEOUT_MS), redirects are not followed. The
 * receiver's body means nothing to a delivery: pass `readBody: false`.
 */
export const WEBHOOK_LIMITS = { timeoutMs: 10_000, maxBytes: 64 * 1024, maxRedirects: 0 } as const

const REDIRECTS = new Set([301, 302, 303, 307, 308])
/** Credentials meant for one origin are not sent to another (as the Fetch standard does). */
const ORIGIN_BOUND_HEADERS = ['authorization', 'cookie', 'proxy-authorization']

/** URLs write IPv6 hosts in brackets; addresses come without. */
const unbracket = (host: string) => host.replace(/^\[(.*)\]$/, '$1')

/**
 * The URL, parsed and checked, without fetching it: for refusing a webhook endpoint at create
 * and PATCH (contract §15: host names resolved then). Throws FetchError `bad_url`,
 * `url_not_allowed`, or `connection_failed` when the host does not resolve.
 */
export async function checkUrl(url: string, options: GuardOptions & { timeoutMs?: number }): Promise<URL> {
  const parsed = parseUrl(url)
  await checkedAddresses(parsed, options, AbortSignal.timeout(options.timeoutMs ?? 10_000))
  return parsed
}

export async function safeFetch(url: string, options: SafeFetchOptions): Promise<SafeFetchResponse> {
  const deadline = AbortSignal.timeout(options.timeoutMs)
  let current = parseUrl(url)
  let method = options.method ?? 'GET'
  let body = options.body
  const headers = new Headers(options.headers)
  // Bytes counted against maxBytes are the bytes on the wire: nothing expands after the count.
  if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'identity')

  for (let redirects = 0; ; redirects++) {
    const response = await connect(current, { method, headers, body }, options, deadline)
    const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null
    if (location === null || options.maxRedirects === 0) {
      const bytes = options.readBody === false ? await discard(response) : await readBounded(response, options.maxBytes, current, deadline)
      return { status: response.status, headers: response.headers, body: bytes, url: current.href, redirects }
    }
    await discard(response)
    if (redirects >= options.maxRedirects) {
      throw new FetchError('too_many_redirects', current.href, `more than ${options.maxRedirects} redirects`)
    }
    const next = parseUrl(location, current)
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET'
      body = undefined
      headers.delete('content-type')
      headers.delete('content-length')
    }
    if (next.origin !== current.origin) for (const name of ORIGIN_BOUND_HEADERS) headers.delete(name)
    current = next
  }
}

function parseUrl(text: string, base?: URL): URL {
  let url: URL
  try {
    url = new URL(text, base)
  } catch (cause) {
    throw new FetchError('bad_url', text, 'not a URL', { cause })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchError('bad_url', url.href, `scheme ${url.protocol} is not http or https`)
  return url
}

/**
 * The addresses this hop may connect to, all of them checked. The WHATWG parser has already
 * turned every IPv4 spelling (`2130706433`, `0x7f.1`, `127.1`) into dotted decimal and
 * lower-cased the host, so the allow-list and the literal check see one canonical form.
 */
async function checkedAddresses(url: URL, options: GuardOptions, deadline: AbortSignal): Promise<string[]> {
  const host = url.hostname
  const allowed = options.allowHosts.some((entry) => canonicalHost(entry) === host)
  const literal = unbracket(host)
  let addresses: string[]
  if (isIP(literal)) {
    addresses = [literal]
  } else {
    try {
      addresses = await beforeDeadline((options.resolve ?? resolveWithSystem)(host), deadline)
    } catch (cause) {
      if (deadline.aborted) throw new FetchError('timeout', url.href, `${host} did not resolve in time`, { cause })
      throw new FetchError('connection_failed', url.href, `${host} did not resolve`, { cause })
    }
    if (addresses.length === 0) throw new FetchError('connection_failed', url.href, `${host} has no address`)
  }
  if (!allowed) {
    for (const address of addresses) {
      const reason = refusedReason(address)
      // The resolved address stays out of the message: it may reach a customer (a delivery's
      // `error`) and would tell them what our name servers know about internal names.
      if (reason !== null)
        throw new FetchError('url_not_allowed', url.href, isIP(literal) ? `${host} is ${reason}` : `${host} resolves to a non-public address (${reason})`)
    }
  }
  return addresses
}

/** An allow-list entry parsed as a URL host is, so `EXAMPLE.com` and `[::1]` compare as written. */
function canonicalHost(entry: string): string | undefined {
  try {
    return new URL(`http://${entry.trim()}`).hostname
  } catch {
    return undefined
  }
}

async function connect(
  url: URL,
  request: { method: string; headers: Headers; body: string | Uint8Array | undefined },
  options: SafeFetchOptions,
  deadline: AbortSignal,
): Promise<Response> {
  const addresses = await checkedAddresses(url, options, deadline)
  const headers = new Headers(request.headers)
  headers.set('host', url.host)
  // An IP literal host is verified as an IP; SNI carries names only.
  const serverName = isIP(unbracket(url.hostname)) ? undefined : url.hostname
  let failure: unknown
  // Every address was checked above, so trying the next one after a refused connection is safe.
  for (const target of addresses.map((address) => atAddress(url, address))) {
    try {
      return await fetch(target, {
        method: request.method,
        headers,
        body: request.body,
        redirect: 'manual',
        signal: deadline,
        // A proxy would pick the address itself; the checked address is the one to reach.
        proxy: false,
        decompress: false,
        tls: serverName ? { serverName } : undefined,
      })
    } catch (cause) {
      if (deadline.aborted) throw new FetchError('timeout', url.href, 'no answer in time', { cause })
      failure = cause
      if (!NOT_CONNECTED.has((cause as { code?: string }).code ?? '')) break
    }
  }
  throw new FetchError('connection_failed', url.href, `no answer from ${url.host}`, { cause: failure })
}

/**
 * The URL with its host replaced by the checked address. The `hostname` setter ignores a value
 * it cannot parse (an IPv6 zone, a resolver's odd answer) and would leave the name in place for
 * fetch to resolve again, so the result is verified.
 */
function atAddress(url: URL, address: string): URL {
  const target = new URL(url)
  target.hostname = address.includes(':') ? `[${address}]` : address
  if (!isIP(unbracket(target.hostname))) {
    throw new FetchError('connection_failed', url.href, `cannot connect to the address ${address}`)
  }
  return target
}

/** Errors that mean nothing was sent, so another address of the same host may be tried. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL'])

async function readBounded(response: Response, maxBytes: number, url: URL, deadline: AbortSignal): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? 0)
  if (declared > maxBytes) {
    await discard(response)
    throw new FetchError('too_large', url.href, `${declared} bytes declared, at most ${maxBytes}`)
  }
  if (!response.body) return new Uint8Array(0)
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > maxBytes) throw new FetchError('too_large', url.href, `more than ${maxBytes} bytes`)
      chunks.push(value)
    }
  } catch (cause) {
    await reader.cancel().catch(() => {})
    if (cause instanceof FetchError) throw cause
    if (deadline.aborted) throw new FetchError('timeout', url.href, 'body not read in time', { cause })
    throw new FetchError('connection_failed', url.href, 'connection lost while reading the body', { cause })
  }
  return Buffer.concat(chunks, size)
}

async function discard(response: Response): Promise<Uint8Array> {
  await response.body?.cancel().catch(() => {})
  return new Uint8Array(0)
}

/** DNS lookups cannot be aborted; the deadline still ends the wait for one. */
function beforeDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(deadline.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(deadline.reason)
    deadline.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', onAbort))
  })
}
