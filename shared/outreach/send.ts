/**
 * One signed POST of a delivery body to an endpoint (contract §4.2; architecture.md "Outreach
 * signature"). Whatever happens is an answer for the attempt log: a status code, or the error
 * that stood in for one, and how long it took.
 */
import { signatureHeader } from './signature'

export const OUTREACH_USER_AGENT = 'property-lead-api-outreach/1.0'

export interface SendResult {
  /** null when no HTTP answer came (timeout, connection error). */
  statusCode: number | null
  error: string | null
  latencyMs: number
}

export async function sendSigned(url: string, delivery: { deliveryId: string; secret: string; body: string }, timeoutMs: number): Promise<SendResult> {
  const timestamp = Math.floor(Date.now() / 1000)
  const started = performance.now()
  let statusCode: number | null = null
  let error: string | null = null
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': OUTREACH_USER_AGENT,
        'x-webhook-id': delivery.deliveryId,
        'x-webhook-timestamp': String(timestamp),
        'x-webhook-signature': signatureHeader(delivery.secret, timestamp, delivery.body),
      },
      body: delivery.body,
      // A redirect is not a delivery: the signed body must reach the configured URL itself.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    })
    statusCode = res.status
    await res.body?.cancel().catch(() => {})
  } catch (e) {
    error = describeFetchError(e, timeoutMs)
  }
  return { statusCode, error, latencyMs: Math.round(performance.now() - started) }
}

function describeFetchError(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; code?: string; message?: string }
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return `timeout after ${timeoutMs} ms`
  const text = [err?.code, err?.message].filter(Boolean).join(': ') || String(e)
  return text.slice(0, 500)
}
