/**
 * Standard Webhooks signatures (contract §10.2; standardwebhooks.com): the signed content is
 * `<webhook-id>.<webhook-timestamp>.<body>`, the key is the base64-decoded part of the secret
 * after `whsec_`, and `webhook-signature` is `v1,<base64 HMAC-SHA256>`, several separated by a
 * space (during a rotation, one per secret). Receivers verify with any Standard Webhooks library
 * (test/worker/webhook-delivery.test.ts uses the reference `standardwebhooks` package).
 */
import { createHmac, randomBytes } from 'node:crypto'

export const SECRET_PREFIX = 'whsec_'

/** `whsec_` + base64 of 32 random bytes (256 bits), the form the specification recommends. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64')
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`
}

/** The three headers of one attempt, signed with every current secret. */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => sign(s, id, timestamp, body)).join(' '),
  }
}
