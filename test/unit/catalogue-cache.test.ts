import { describe, expect, test } from 'bun:test'
import { CataloguePageCache } from '../../shared/listings/catalogue-cache'

const page = (bytes: number, count = 1) => ({ count, data: new Uint8Array(bytes).fill(7) })

describe('CataloguePageCache', () => {
  test('a page is served only for the generation it was stored with', () => {
    const cache = new CataloguePageCache(1 << 20)
    cache.set('k', 5, page(10, 3))
    expect(cache.has('k')).toBe(true)
    expect(cache.get('k', 5)?.count).toBe(3)
    expect(cache.get('k', 6)).toBeUndefined()
    cache.set('k', 6, page(10, 4))
    expect(cache.get('k', 5)).toBeUndefined()
    expect(cache.get('k', 6)?.count).toBe(4)
  })

  test('keeps its own copy of the bytes', () => {
    const cache = new CataloguePageCache(1 << 20)
    const p = page(4)
    cache.set('k', 1, p)
    p.data.fill(0)
    expect([...cache.get('k', 1)!.data]).toEqual([7, 7, 7, 7])
  })

  test('evicts the pages not read since the hand last passed, past its bytes (a quarter of the space is for pages)', () => {
    const cache = new CataloguePageCache(4 * 8 * 1000)
    for (const k of ['a', 'b', 'c']) cache.set(k, 1, page(700))
    cache.get('a', 1)
    // Each entry is 700 bytes plus its overhead; a fourth and fifth push out the oldest unused.
    for (const k of ['d', 'e', 'f', 'g', 'h', 'i']) cache.set(k, 1, page(700))
    expect(cache.size.bytes).toBeLessThanOrEqual(8000)
    expect(cache.has('a')).toBe(true)
    expect(cache.has('b')).toBe(false)
    expect(cache.has('i')).toBe(true)
  })

  test("a page larger than an eighth of the pages' space is not kept", () => {
    const cache = new CataloguePageCache(4 * 8000)
    cache.set('big', 1, page(2000))
    expect(cache.has('big')).toBe(false)
    expect(cache.size).toEqual({ entries: 0, bytes: 0 })
  })

  test('documents: kept per listing at a generation, beside the pages', () => {
    const cache = new CataloguePageCache(1 << 20)
    cache.setDoc(7, 3, new Uint8Array([1, 2]))
    expect([...cache.getDoc(7, 3)!]).toEqual([1, 2])
    expect(cache.getDoc(7, 4)).toBeUndefined()
    expect(cache.getDoc(8, 3)).toBeUndefined()
    expect(cache.size.entries).toBe(1)
  })

  test('with every entry read since the hand passed, an insertion still keeps within the bytes', () => {
    const cache = new CataloguePageCache(4 * 100 * 1000)
    for (let id = 0; id < 400; id++) cache.setDoc(id, 1, new Uint8Array(700))
    for (let id = 0; id < 400; id++) cache.getDoc(id, 1)
    for (let id = 400; id < 500; id++) {
      cache.setDoc(id, 1, new Uint8Array(700))
      expect(cache.size.bytes).toBeLessThanOrEqual(3 * 100 * 1000)
    }
    expect(cache.getDoc(499, 1)).toBeDefined()
  })
})
