/**
 * The catalogue bench's query shapes and the seed's cities, apart from the bench's entry point so
 * that other tools (an EXPLAIN of the mix) can draw the same requests.
 */
import type { ListParams } from '../shared/listings/catalogue-filters'

export const CITIES: [string, number, number][] = [
  ['Madrid', 40.4168, -3.7038],
  ['Barcelona', 41.3874, 2.1686],
  ['Valencia', 39.4699, -0.3763],
  ['Sevilla', 37.3891, -5.9845],
  ['Zaragoza', 41.6488, -0.8891],
  ['Málaga', 36.7213, -4.4214],
  ['Murcia', 37.9922, -1.1307],
  ['Palma', 39.5696, 2.6502],
  ['Bilbao', 43.263, -2.935],
  ['Alicante', 38.3452, -0.481],
  ['Córdoba', 37.8882, -4.7794],
  ['Valladolid', 41.6523, -4.7245],
  ['Vigo', 42.2406, -8.7207],
  ['Gijón', 43.5322, -5.6611],
  ['Granada', 37.1773, -3.5986],
  ['A Coruña', 43.3623, -8.4115],
  ['Vitoria', 42.8467, -2.6716],
  ['Elche', 38.2699, -0.7126],
  ['Oviedo', 43.3614, -5.8593],
  ['Cádiz', 36.5271, -6.2886],
]

export const QUERY_MIX: { name: string; params: ListParams }[] = [
  { name: 'no filter', params: {} },
  { name: 'operation+price range', params: { operation: 'venta', min_price: 200000, max_price: 400000 } },
  { name: 'city+type+min_bedrooms', params: { city: 'Valencia', type: 'apartamento', min_bedrooms: 2 } },
  {
    name: 'circle 2 km (Madrid)',
    params: { locations: JSON.stringify([{ geometry: { type: 'circle', center: { lat: 40.4168, lng: -3.7038 }, radius: 2000 } }]) },
  },
  {
    name: 'polygon (Barcelona centre)',
    params: {
      locations: JSON.stringify([
        {
          geometry: {
            type: 'polygon',
            coordinates: [
              [41.37, 2.15],
              [41.37, 2.19],
              [41.4, 2.19],
              [41.4, 2.15],
            ],
          },
        },
      ]),
    },
  },
  { name: 'sort price_asc', params: { sort: 'price_asc' } },
  { name: 'offset 5000', params: { offset: 5000 } },
  // Search (contract §11): the seed puts piscina in ~30% of descriptions, garaje in ~25% (both in
  // ~10%), terraza in ~40%, and palomar in 1 of 5,003 listings.
  { name: 'q common word', params: { q: 'piscina' } },
  { name: 'q two words', params: { q: 'piscina garaje' } },
  { name: 'q rare word', params: { q: 'palomar' } },
  { name: 'q word+filters', params: { q: 'terraza', operation: 'venta', min_price: 200000, max_price: 400000, min_bedrooms: 2 } },
  {
    name: 'q polygon+word',
    params: {
      q: 'terraza',
      locations: JSON.stringify([
        {
          geometry: {
            type: 'polygon',
            coordinates: [
              [41.37, 2.15],
              [41.37, 2.19],
              [41.4, 2.19],
              [41.4, 2.15],
            ],
          },
        },
      ]),
    },
  },
]

const OPERATIONS = [
  ['venta', 'price_sale', 50000, 1000000],
  ['alquiler', 'price_rent', 400, 4000],
] as const
const TYPES = ['apartamento', 'casa', 'local', 'nave', 'oficina', 'terreno'] as const
/** The seed's descriptions: terraza in ~40% (the commonest), piscina ~30%, garaje ~25%. */
const COMMON_WORDS = ['terraza', 'piscina', 'garaje']
const COMMON_PAIRS = ['piscina terraza', 'garaje terraza', 'piscina garaje']
/** Phrases the seed writes, so each matches in sequence (a recheck of positions on every row). */
const PHRASES = ['"amplia terraza"', '"plaza de garaje"', '"piscina comunitaria"']

/**
 * The concurrency mix: each shape draws new parameters on every request (`r` is the run's seeded
 * sequence), so no two consecutive requests are the same and no cache of identical requests can
 * answer them; the HTTP run and the SQL-alone run draw the same sequence.
 */
export const VARIED_MIX: { name: string; draw: (r: () => number) => ListParams }[] = [
  { name: 'no filter', draw: (r) => ({ offset: 20 * Math.floor(r() * 10) }) },
  {
    name: 'operation+price range',
    draw: (r) => {
      const [operation, , lo, hi] = OPERATIONS[Math.floor(r() * OPERATIONS.length)]
      const min = Math.round(lo + r() * (hi - lo) * 0.6)
      return { operation, min_price: min, max_price: Math.round(min + (hi - lo) * (0.1 + r() * 0.3)) }
    },
  },
  { name: 'city+type+min_bedrooms', draw: (r) => ({ city: pick(r, CITIES)[0], type: pick(r, TYPES), min_bedrooms: Math.floor(r() * 4) }) },
  {
    name: 'circle 3 km',
    draw: (r) => {
      const [, lat, lng] = pick(r, CITIES)
      return {
        locations: JSON.stringify([{ geometry: { type: 'circle', center: { lat: lat + (r() - 0.5) * 0.06, lng: lng + (r() - 0.5) * 0.08 }, radius: 3000 } }]),
      }
    },
  },
  {
    // The seed spreads a city's listings over ±0.09° of latitude and ±0.12° of longitude.
    name: 'polygon whole city',
    draw: (r) => {
      const [, lat, lng] = pick(r, CITIES)
      const [s, n, w, e] = [lat - 0.095 - r() * 0.01, lat + 0.095 + r() * 0.01, lng - 0.125 - r() * 0.01, lng + 0.125 + r() * 0.01]
      return {
        locations: JSON.stringify([
          {
            geometry: {
              type: 'polygon',
              coordinates: [
                [s, w],
                [s, e],
                [n, e],
                [n, w],
              ],
            },
          },
        ]),
      }
    },
  },
  {
    name: 'sort by price',
    draw: (r) => ({ operation: pick(r, OPERATIONS)[0], sort: r() < 0.5 ? 'price_asc' : 'price_desc', offset: 20 * Math.floor(r() * 5) }),
  },
  { name: 'offset >= 5000', draw: (r) => ({ offset: 5000 + 100 * Math.floor(r() * 40) }) },
  // Search (contract §11): offsets anywhere in the 1,000 a search pages through.
  { name: 'q commonest word', draw: (r) => ({ q: 'terraza', offset: 100 * Math.floor(r() * 10) }) },
  {
    name: 'q two words+operation',
    draw: (r) => ({ q: pick(r, COMMON_PAIRS), operation: pick(r, OPERATIONS)[0], offset: 20 * Math.floor(r() * 10) }),
  },
  { name: 'q phrase', draw: (r) => ({ q: pick(r, PHRASES), offset: 20 * Math.floor(r() * 10) }) },
  {
    name: 'q word+price range',
    draw: (r) => {
      const [operation, , lo, hi] = OPERATIONS[Math.floor(r() * OPERATIONS.length)]
      const min = Math.round(lo + r() * (hi - lo) * 0.6)
      return { q: pick(r, COMMON_WORDS), operation, min_price: min, max_price: Math.round(min + (hi - lo) * (0.1 + r() * 0.3)) }
    },
  },
]

const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)]
