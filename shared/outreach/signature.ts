/**
 * Outreach webhook signatures (architecture.md "Outreach signature", contract §4.2):
 *
 *   X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * The HMAC key is the whole secret string as printed by `cli outreach set` (UTF-8, `whsec_`
 * prefix included), so a receiver pastes it as it is. `verifyWebhookSignature` is what a
 * receiver runs (docs/outreach.md has the same in a standalone sample); the tests use it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export const SECRET_PREFIX = 'whsec_'
/** Receivers should refuse a timestamp further than this from their clock (replay window). */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** A new signing secret: `whsec_` + 32 random bytes (256 bits) in base64url. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url')
}

export function computeSignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')
}

export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${computeSignature(secret, timestamp, body)}`
}

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: 'malformed' | 'stale' | 'mismatch' }

/**
 * Checks a `X-Webhook-Signature` header against the raw body. Several `v1=` entries are
 * accepted (any may match), so a future rotation can sign with two secrets at once.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  body: string,
  options: { toleranceSeconds?: number; now?: number } = {},
): VerifyResult {
  if (!header) return { ok: false, reason: 'malformed' }
  let timestamp: number | undefined
  const signatures: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq === -1) continue
    const k = part.slice(0, eq).trim()
    const v = part.slice(eq + 1).trim()
    if (k === 't' && /^\d{1,12}$/.test(v)) timestamp = Number(v)
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) signatures.push(v)
  }
  if (timestamp === undefined || signatures.length === 0) return { ok: false, reason: 'malformed' }
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return { ok: false, reason: 'stale' }
  const expected = Buffer.from(computeSignature(secret, timestamp, body), 'hex')
  const match = signatures.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected))
  return match ? { ok: true, timestamp } : { ok: false, reason: 'mismatch' }
}
