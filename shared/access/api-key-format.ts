/**
 * API key format (api-spec §5.2): `AC_LIVE_<key_id>.<secret>`. The key id is public; the secret
 * has 192 random bits (base64url) and only its SHA-256 is stored.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

const KEY_RE = /^AC_LIVE_([A-Za-z0-9]{16})\.([A-Za-z0-9_-]{32})$/

export interface ParsedKey {
  keyId: string
  secret: string
}

export function parseApiKey(raw: string): ParsedKey | null {
  const m = KEY_RE.exec(raw)
  return m ? { keyId: m[1], secret: m[2] } : null
}

export function generateApiKey(): { keyId: string; secret: string; apiKey: string; secretHash: string } {
  const keyId = randomBytes(12).toString('base64url').replace(/[-_]/g, 'x').slice(0, 16)
  const secret = randomBytes(24).toString('base64url')
  return { keyId, secret, apiKey: `AC_LIVE_${keyId}.${secret}`, secretHash: hashSecret(secret) }
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex')
  const b = Buffer.from(storedHash, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}
