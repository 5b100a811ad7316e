import { describe, expect, test } from 'bun:test'
import { approximateAddress, catalogueFilterColumns, rentalKind, toPublicProperty, type PrivatePropertyRow } from '../../shared/listings/property-view'
import { mergePatch, propertyRuleErrors } from '../../shared/listings/property-input'

const base: PrivatePropertyRow = {
  id: 7,
  operations: ['traspaso', 'venta', 'alquiler'],
  type: 'local',
  subtype: 'local_comercial',
  title: 'Local',
  description: '',
  priceSale: 100000,
  priceRent: 900,
  priceTransfer: 30000,
  location: {
    city: 'Madrid',
    postal_code: '28013',
    address: 'Calle Mayor 5, 2º izq',
    full_address: 'Edificio Sol, Calle Mayor 5, 2º izq, 28013 Madrid',
    building_name: 'Edificio Sol',
    coordinates: { latitude: 40.416775, longitude: -3.70379 },
  },
  area: { total: 120, built: 130, plot: 200 },
  bedrooms: 0,
  bathrooms: 1,
  characteristics: { elevator: true },
  features: [{ key: 'ac', label: 'Aire acondicionado', value: true }],
  isFeatured: true,
  status: 'disponible',
  createdAt: new Date('2026-01-01T00:00:00Z'),
  updatedAt: new Date('2026-01-02T00:00:00Z'),
}
const withLocation = (visibility: string) => ({ ...base, location: { ...(base.location as object), visibility } })

describe('toPublicProperty (contract §3.4)', () => {
  test('operations in canonical order, subtype label, prices, specs and features', () => {
    const v = toPublicProperty(base, [])
    expect(v.operation).toBe('venta,alquiler,traspaso')
    expect(v.subtype).toBe('Local comercial')
    expect(v.price).toBe(100000)
    expect(v.specs).toEqual({
      elevator: true,
      size_built: 130,
      plot_size: 200,
      address_privacy: 'approximate',
      price_calc: { price_alq: 900, price_trasp: 30000 },
    })
    expect(v.features).toEqual([{ key: 'ac', label: 'Aire acondicionado', value: true, isextra: false }])
    expect(v.country).toBe('España')
    expect(v.created_at).toBe('2026-01-01T00:00:00.000Z')
  })

  test('no subtype → Sin Especificar; no sale price → null', () => {
    const v = toPublicProperty({ ...base, subtype: null, priceSale: null, operations: ['alquiler'] }, [])
    expect(v.subtype).toBe('Sin Especificar')
    expect(v.price).toBeNull()
  })

  test('public: full address, exact coordinates, postal code, building name', () => {
    const v = toPublicProperty(withLocation('public'), [])
    expect(v.address).toBe('Edificio Sol, Calle Mayor 5, 2º izq, 28013 Madrid')
    expect([v.lat, v.lon]).toEqual([40.416775, -3.70379])
    expect(v.postal_code).toBe('28013')
    expect(v.specs.building_name).toBe('Edificio Sol')
  })

  test('approximate (the default): street without number or building, 2-decimal coordinates', () => {
    for (const row of [base, withLocation('approximate')]) {
      const v = toPublicProperty(row, [])
      // contract §15 §3.4: the street, then postal code and city (before: the street alone).
      expect(v.address).toBe('Calle Mayor, 28013 Madrid')
      expect([v.lat, v.lon]).toEqual([40.42, -3.7])
      expect(v.postal_code).toBe('28013')
      expect(v.specs.building_name).toBeUndefined()
      expect(catalogueFilterColumns(row).point).toEqual({ lat: 40.42, lon: -3.7 })
    }
  })

  test('hidden: no address, coordinates, postal code or building name; no point', () => {
    const row = withLocation('hidden')
    const v = toPublicProperty(row, [])
    for (const k of ['address', 'lat', 'lon', 'postal_code'] as const) expect(k in v).toBe(false)
    expect(v.specs.building_name).toBeUndefined()
    expect(catalogueFilterColumns(row).point).toBeNull()
  })

  test('approximate address drops numbers, floors and building names', () => {
    expect(approximateAddress({ city: 'X', address: 'Av. del Puerto 123, 4ºB', building_name: 'Torre Azul' })).toBe('Av. del Puerto, X')
    expect(approximateAddress({ city: 'X', address: 'Torre Azul, Calle Luna s/n', building_name: 'Torre Azul' })).toBe('Calle Luna, X')
    expect(approximateAddress({ city: 'X' })).toBeUndefined()
  })

  test('images: only the given ready images, ordered by position, public URL only', () => {
    const v = toPublicProperty(base, [
      { id: 'b', publicUrl: 'https://cdn.example/b.jpg', position: 2, isPrimary: false, title: '' },
      { id: 'a', publicUrl: 'https://cdn.example/a.jpg', position: 1, isPrimary: true, title: 'Fachada' },
    ])
    expect(v.images).toEqual([
      { id: 'a', url: 'https://cdn.example/a.jpg', order: 1, is_primary: true, title: 'Fachada' },
      { id: 'b', url: 'https://cdn.example/b.jpg', order: 2, is_primary: false, title: '' },
    ])
  })

  test('rental kind', () => {
    expect(rentalKind({ operations: ['venta'], characteristics: {} })).toBeNull()
    expect(rentalKind({ operations: ['venta'], characteristics: { temporal_renting: true } })).toBeNull()
    expect(rentalKind({ operations: ['alquiler'], characteristics: {} })).toBe('anual')
    expect(rentalKind({ operations: ['alquiler'], characteristics: { temporal_renting: true, holiday_renting: true } })).toBe('temporal')
    expect(rentalKind({ operations: ['alquiler'], characteristics: { holiday_renting: true } })).toBe('vacacional')
  })
})

describe('property input rules (contract §3.1–3.2)', () => {
  const input = { operations: ['venta', 'alquiler'], type: 'apartamento', title: 't', pricing: { sale: 1 }, location: { city: 'x' }, area: { total: 1 } }
  test('each operation needs its price; subtype must belong to the type; feature keys unique', () => {
    expect(
      propertyRuleErrors({
        ...input,
        subtype: 'local_comercial',
        features: [
          { key: 'a', label: 'A', value: 1 },
          { key: 'a', label: 'B', value: 2 },
        ],
      }).map((e) => e.loc),
    ).toEqual([
      ['body', 'pricing', 'rent'],
      ['body', 'subtype'],
      ['body', 'features', 1, 'key'],
    ])
  })
  test('merge: nested objects merge, null clears, arrays replace', () => {
    expect(
      mergePatch<Record<string, unknown>>(
        { pricing: { sale: 1, rent: 2 }, subtype: 'piso', operations: ['venta'] },
        { pricing: { rent: null, transfer: 3 }, subtype: null, operations: ['traspaso'] },
      ),
    ).toEqual({
      pricing: { sale: 1, transfer: 3 },
      operations: ['traspaso'],
    })
  })
})
