/**
 * API key format (api-spec §5.2, contract §16.1): `AC_LIVE_<key_id>.<secret>` for a secret key,
 * `AC_PUB_<key_id>.<secret>` for a publishable one. The key id is public; the secret has 192
 * random bits (base64url) and only its SHA-256 is stored. The prefix says which kind the key
 * claims to be; the stored kind decides (a key whose prefix disagrees is refused).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

export type KeyKind = 'secret' | 'publishable'

const KEY_RE = /^AC_(LIVE|PUB)_([A-Za-z0-9]{16})\.([A-Za-z0-9_-]{32})$/
const PREFIX: Record<KeyKind, string> = { secret: 'AC_LIVE_', publishable: 'AC_PUB_' }

export interface ParsedKey {
  kind: KeyKind
  keyId: string
  secret: string
}

export function parseApiKey(raw: string): ParsedKey | null {
  const m = KEY_RE.exec(raw)
  return m ? { kind: m[1] === 'PUB' ? 'publishable' : 'secret', keyId: m[2], secret: m[3] } : null
}

/** A value that presents itself as a secret key, well-formed or not: never accepted where a page could show it. */
export const looksSecret = (raw: string): boolean => raw.startsWith(PREFIX.secret)

export function generateApiKey(kind: KeyKind = 'secret'): { keyId: string; secret: string; apiKey: string; secretHash: string } {
  const keyId = randomBytes(12).toString('base64url').replace(/[-_]/g, 'x').slice(0, 16)
  const secret = randomBytes(24).toString('base64url')
  return { keyId, secret, apiKey: `${PREFIX[kind]}${keyId}.${secret}`, secretHash: hashSecret(secret) }
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex')
  const b = Buffer.from(storedHash, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}
