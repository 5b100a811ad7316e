/**
 * The approximate address is built from the parts (contract §15 §3.4): the
 * street name without house number or building name, then postal code and city. Never by
 * deleting text from the full address, so no letter case, substring or number written as
 * words lets the building or the number through.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { approximateAddress } from '../../shared/listings/property-view'

/** Case- and accent-insensitive tokens, as a reader would compare them. */
const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
const tokens = (s: string) =>
  fold(s)
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)

// Street, city and building/number vocabularies are disjoint as whole words, but share
// substrings on purpose ("Sol" in "Soledad", "Mar" in "Marina", "tres" in "Trespaderne").
const STREET_TYPES = ['Calle', 'Avenida', 'Av.', 'Paseo', 'Plaza', 'Camino', 'Ronda', 'Carrer']
const STREET_NAMES = ['Soledad', 'Mayor', 'Marina', 'Colón', 'Luna', 'Trespaderne', 'Azulejos', 'Real', 'Torrent', 'Doctor Fleming', 'Reyes Católicos']
const CITIES = ['Valencia', 'Madrid', 'Sevilla', 'Bilbao', "L'Hospitalet de Llobregat"]
const BUILDING_WORDS = ['Edificio', 'Torre', 'Residencial', 'Sol', 'Mar', 'Azul', 'Bloque', 'Atalaya', 'Tres']
const NUMBER_WORDS = ['uno', 'dos', 'tres', 'cuatro', 'doce', 'veintitrés', 'cuarenta']

const randomCase = (s: string) =>
  fc
    .constantFrom<(x: string) => string>(
      (x) => x,
      (x) => x.toLowerCase(),
      (x) => x.toUpperCase(),
    )
    .map((f) => f(s))
const street = fc
  .tuple(fc.constantFrom(...STREET_TYPES), fc.constantFrom('', 'de ', 'del ', 'de la '), fc.constantFrom(...STREET_NAMES))
  .map(([t, p, n]) => `${t} ${p}${n}`)
const building = fc
  .array(fc.constantFrom(...BUILDING_WORDS), { minLength: 1, maxLength: 3 })
  .map((w) => w.join(' '))
  .chain(randomCase)
const number = fc
  .oneof(
    fc.integer({ min: 1, max: 400 }).map(String),
    fc.tuple(fc.integer({ min: 1, max: 99 }), fc.constantFrom('B', 'bis', '-A')).map(([n, s]) => `${n}${s}`),
    fc.constantFrom(...NUMBER_WORDS),
    fc.tuple(fc.constantFrom('número', 'nº', 'núm.', 'n.º'), fc.constantFrom(...NUMBER_WORDS, '7', '12')).map(([m, n]) => `${m} ${n}`),
  )
  .chain(randomCase)
const floor = fc.constantFrom('', ', 3º B', ', 2º izq', ', bajo', ', piso 4, puerta 2', ', segundo izquierda')
const postal = fc.integer({ min: 1000, max: 52999 }).map((n) => String(n).padStart(5, '0'))

const location = fc
  .record({
    street,
    building,
    number,
    floor,
    postal,
    city: fc.constantFrom(...CITIES),
    shape: fc.integer({ min: 0, max: 5 }),
    structured: fc.boolean(),
    withPostal: fc.boolean(),
  })
  .map(({ street, building, number, floor, postal, city, shape, structured, withPostal }) => {
    const b = building
    const withNumber = `${street} ${number}${floor}`
    const address = [
      withNumber,
      `${b}, ${withNumber}`,
      `${b} ${withNumber}`,
      `${withNumber}, ${b}`,
      `${street}, ${number}${floor}`,
      `${b.toLowerCase()}, ${street.toUpperCase()} ${number}`,
    ][shape]
    return {
      parts: { street, building, number, city, postal },
      location: {
        city,
        ...(withPostal && { postal_code: postal }),
        // Building names are often given in another case than in the address text.
        building_name: shape % 2 ? b.toUpperCase() : b,
        ...(structured ? { street, number } : shape % 3 === 0 ? { full_address: `${address}, ${postal} ${city}` } : { address }),
      },
    }
  })

describe('approximate address (contract §15 §3.4)', () => {
  test('property: no token of the building name or of the number ever appears; the street and city do', () => {
    fc.assert(
      fc.property(location, ({ parts, location }) => {
        const out = approximateAddress(location)
        expect(out).toBeDefined()
        const seen = new Set(tokens(out!))
        const streetTokens = new Set(tokens(parts.street))
        for (const t of [...tokens(parts.building), ...tokens(parts.number)]) {
          if (streetTokens.has(t)) continue
          expect(seen.has(t), `"${t}" leaked into "${out}" from ${JSON.stringify(location)}`).toBe(false)
        }
        // The street name survives whole (no substring cut out of it), followed by postal code and city.
        const expected = [parts.street, [location.postal_code, parts.city].filter(Boolean).join(' ')].join(', ')
        expect(fold(out!)).toBe(fold(expected))
      }),
      { numRuns: 2000 },
    )
  })

  test('the reported leaks', () => {
    // Building name in another letter case.
    expect(approximateAddress({ city: 'Madrid', postal_code: '28013', address: 'edificio sol, Calle Mayor 5', building_name: 'Edificio Sol' })).toBe(
      'Calle Mayor, 28013 Madrid',
    )
    // A substring of the street that equals the building name is not cut out of it.
    expect(approximateAddress({ city: 'Madrid', address: 'Calle Soledad 3', building_name: 'Sol' })).toBe('Calle Soledad, Madrid')
    // A house number written as words.
    expect(approximateAddress({ city: 'Madrid', address: 'Calle Mayor número tres' })).toBe('Calle Mayor, Madrid')
    expect(approximateAddress({ city: 'Madrid', address: 'Calle Mayor tres, segundo izquierda' })).toBe('Calle Mayor, Madrid')
  })

  test('structured street and number are preferred; streets named with numbers keep them', () => {
    expect(approximateAddress({ city: 'Madrid', postal_code: '28004', street: 'Plaza del Dos de Mayo', number: '4', address: 'Plaza del Dos de Mayo 4' })).toBe(
      'Plaza del Dos de Mayo, 28004 Madrid',
    )
    expect(approximateAddress({ city: 'Madrid', address: 'Calle de las Tres Cruces 7' })).toBe('Calle de las Tres Cruces, Madrid')
  })

  test('without any street part there is no approximate address', () => {
    expect(approximateAddress({ city: 'Soria' })).toBeUndefined()
    expect(approximateAddress({ city: 'Soria', postal_code: '42001' })).toBeUndefined()
  })
})
