/**
 * Secrets at rest (architecture.md "Data": outreach signing secrets). AES-256-GCM with a fresh
 * random 96-bit IV per encryption and a key derived from APP_SECRET with HKDF-SHA256, so the
 * database alone never reveals a secret and a changed APP_SECRET makes old boxes unreadable
 * (decrypt throws) instead of silently wrong. `context` is bound as additional authenticated
 * data: a box copied to another row (another business) does not open there.
 *
 * Format: `v1.<iv>.<ciphertext>.<tag>`, each part base64url.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const VERSION = 'v1'
const HKDF_INFO = 'property-lead-api/secret-box/v1'
const IV_BYTES = 12
const TAG_BYTES = 16

export class SecretBoxError extends Error {
  override name = 'SecretBoxError'
}

const keys = new Map<string, Buffer>()

/** 32-byte AES key from APP_SECRET (HKDF-SHA256, fixed info label); cached per secret. */
function keyOf(appSecret: string): Buffer {
  let key = keys.get(appSecret)
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', Buffer.from(appSecret, 'utf8'), Buffer.alloc(0), HKDF_INFO, 32))
    keys.set(appSecret, key)
  }
  return key
}

export function sealSecret(appSecret: string, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', keyOf(appSecret), iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [VERSION, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.')
}

/** The plaintext, or SecretBoxError when the box is malformed, tampered with, sealed under another APP_SECRET or for another context. */
export function openSecret(appSecret: string, box: string, context: string): string {
  const parts = box.split('.')
  if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretBoxError('not a v1 secret box')
  const [, ivText, ciphertextText, tagText] = parts
  const iv = Buffer.from(ivText, 'base64url')
  const tag = Buffer.from(tagText, 'base64url')
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('not a v1 secret box')
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(appSecret), iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()]).toString('utf8')
  } catch (error) {
    throw new SecretBoxError('secret box does not open: wrong APP_SECRET, wrong context or tampered data', { cause: error })
  }
}
