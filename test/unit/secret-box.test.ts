import { describe, expect, test } from 'bun:test'
import { openSecret, sealSecret, SecretBoxError } from '../../shared/platform/secret-box'

const APP = 'a'.repeat(40)
const OTHER = 'b'.repeat(40)

describe('secret box (AES-256-GCM, key from APP_SECRET)', () => {
  test('round trip, and the box does not contain the plaintext', () => {
    const box = sealSecret(APP, 'whsec_topsecret', 'ctx:1')
    expect(box).toStartWith('v1.')
    expect(box).not.toContain('topsecret')
    expect(openSecret(APP, box, 'ctx:1')).toBe('whsec_topsecret')
  })

  test('a random IV per seal: the same secret gives different boxes', () => {
    const a = sealSecret(APP, 'same', 'ctx')
    const b = sealSecret(APP, 'same', 'ctx')
    expect(a).not.toBe(b)
    expect(a.split('.')[1]).not.toBe(b.split('.')[1])
    expect(Buffer.from(a.split('.')[1], 'base64url').length).toBe(12)
  })

  test('another APP_SECRET does not open it', () => {
    const box = sealSecret(APP, 'x', 'ctx')
    expect(() => openSecret(OTHER, box, 'ctx')).toThrow(SecretBoxError)
  })

  test('another context (another business) does not open it', () => {
    const box = sealSecret(APP, 'x', 'outreach-endpoint:1')
    expect(() => openSecret(APP, box, 'outreach-endpoint:2')).toThrow(SecretBoxError)
  })

  test('tampering with any part is detected', () => {
    const box = sealSecret(APP, 'secret value', 'ctx')
    const parts = box.split('.')
    for (const i of [1, 2, 3]) {
      const bytes = Buffer.from(parts[i], 'base64url')
      bytes[0] ^= 1
      const tampered = [...parts]
      tampered[i] = bytes.toString('base64url')
      expect(() => openSecret(APP, tampered.join('.'), 'ctx')).toThrow(SecretBoxError)
    }
  })

  test.each(['', 'plain', 'v2.a.b.c', 'v1.a.b', 'v1.AAAA.AAAA.AAAA'])('malformed box %p is refused', (box) => {
    expect(() => openSecret(APP, box, 'ctx')).toThrow(SecretBoxError)
  })

  test('unicode and empty plaintexts', () => {
    for (const p of ['', 'ñandú €', 'x'.repeat(1000)]) expect(openSecret(APP, sealSecret(APP, p, 'c'), 'c')).toBe(p)
  })
})
