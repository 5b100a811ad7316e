import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { kyeroDate, kyeroProperty, kyeroType, kyeroHeader, KYERO_FOOTER } from '../../shared/feeds/kyero'
import { provinceOfPostalCode } from '../../shared/feeds/provinces'
import { htmlToText, xmlText } from '../../shared/feeds/xml-text'
import type { PropertyView } from '../../shared/listings/schemas'
import { PROPERTY_TYPES, SUBTYPES, NO_SUBTYPE_LABEL } from '../../shared/listings/subtypes'
import { kyeroViolations, parseKyero } from '../helpers/kyero-rules'

const doc = (overrides: Partial<PropertyView> = {}): PropertyView => ({
  id: 7,
  operation: 'venta',
  type: 'apartamento',
  subtype: 'Ático',
  title: 'Ático',
  price: 100000,
  size_total: 80,
  bedrooms: 2,
  bathrooms: 1,
  description: '<p>Hola</p>',
  images: [],
  videos: [],
  specs: { address_privacy: 'hidden', price_calc: {} },
  features: [],
  status: 'disponible',
  city: 'Valencia',
  country: 'España',
  is_featured: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...overrides,
})
const feedOf = (...props: string[]) => `${kyeroHeader(new Date('2026-11-25T10:00:00Z'))}${props.join('')}${KYERO_FOOTER}`

describe('kyeroType', () => {
  test('every type and subtype maps to a type Kyero accepts (English letters, ≥ 3)', () => {
    for (const type of PROPERTY_TYPES) {
      for (const label of [...Object.values(SUBTYPES[type]), NO_SUBTYPE_LABEL])
        expect(kyeroType(type, label), `${type}/${label}`).toMatch(/^[a-zA-Z&\s()/-]{3,}$/)
    }
    expect(kyeroType('apartamento', 'Ático')).toBe('Penthouse')
    expect(kyeroType('casa', NO_SUBTYPE_LABEL)).toBe('House')
  })
})

describe('text', () => {
  test('xmlText escapes markup and drops what XML 1.0 forbids, keeping the rest', () => {
    expect(xmlText('a<b>&"\'')).toBe('a&lt;b&gt;&amp;&quot;&apos;')
    expect(xmlText('x\u0000\u0001\u000B\uFFFE\uD800y\tz\n')).toBe('xy\tz\n')
    expect(xmlText('🌊 עברית')).toBe('🌊 עברית')
  })
  test('htmlToText keeps the words and the paragraphs', () => {
    expect(htmlToText('<p>Uno &amp; dos</p><p>tres<br>cuatro</p>')).toBe('Uno & dos\ntres\ncuatro')
  })
  test('any text gives well-formed XML', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (label, description) => {
        const xml = feedOf(kyeroProperty(doc({ description, features: [{ key: 'k', label: label || 'x', value: true, isextra: false }] }), new Date())!)
        expect(() => parseKyero(xml)).not.toThrow()
      }),
      { numRuns: 300 },
    )
  })
})

describe('kyeroProperty', () => {
  test('a sale, a rental, and a transfer-only listing left out', () => {
    const sale = feedOf(kyeroProperty(doc(), new Date('2026-02-03T04:05:06Z'))!)
    expect(kyeroViolations(sale)).toEqual([])
    expect(parseKyero(sale).properties[0]).toMatchObject({ price: '100000', price_freq: 'sale', date: '2026-02-03 04:05:06', features: { feature: ['Ático'] } })
    const rent = parseKyero(feedOf(kyeroProperty(doc({ price: null, specs: { address_privacy: 'hidden', price_calc: { price_alq: 950.4 } } }), new Date())!))
    expect(rent.properties[0]).toMatchObject({ price: '950', price_freq: 'month' })
    expect(kyeroProperty(doc({ price: null, specs: { address_privacy: 'hidden', price_calc: { price_trasp: 5 } } }), new Date())).toBeNull()
  })
  test('at most 50 images and 50 features; only .jpg/.png/.gif URLs', () => {
    const images = Array.from({ length: 60 }, (_, i) => ({
      id: `i${i}`,
      url: `https://cdn.example.com/images/${i}.${i === 0 ? 'webp' : 'jpg'}`,
      order: i + 1,
      is_primary: i === 0,
      title: '',
    }))
    const features = Array.from({ length: 60 }, (_, i) => ({ key: `f${i}`, label: `F${i}`, value: true, isextra: false }))
    const xml = feedOf(kyeroProperty(doc({ images, features }), new Date())!)
    expect(kyeroViolations(xml)).toEqual([])
    const p = parseKyero(xml).properties[0]
    expect(p.images.image.length).toBe(50)
    expect(p.images.image[0].url).toBe('https://cdn.example.com/images/1.jpg')
    expect(p.features.feature.length).toBe(50)
  })
  test('province from the postal code when the listing names none', () => {
    expect(provinceOfPostalCode('46004')).toBe('Valencia')
    expect(provinceOfPostalCode('08001')).toBe('Barcelona')
    expect(provinceOfPostalCode('99999')).toBeUndefined()
    expect(parseKyero(feedOf(kyeroProperty(doc({ postal_code: '29601', city: 'Marbella' }), new Date())!)).properties[0].province).toBe('Málaga')
  })
  test('kyeroDate is the schema’s form, in UTC', () => {
    expect(kyeroDate(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12-31 23:59:59')
  })
})
