import { describe, expect, test } from 'bun:test'
import { circleBox, parseArea, parseLocations, toSqlArea } from '../../shared/listings/geo'

describe('parseLocations (api-spec §4.3 rules 3–5)', () => {
  test('absent or non-JSON or non-array → ignored (null)', () => {
    expect(parseLocations(undefined)).toBeNull()
    expect(parseLocations('not json')).toBeNull()
    expect(parseLocations('{"geometry":{}}')).toBeNull()
  })

  test('circle', () => {
    expect(parseLocations('[{"geometry":{"type":"circle","center":{"lat":40.4,"lng":-3.7},"radius":1000}}]')).toEqual([
      { geometry: { type: 'circle', center: { lat: 40.4, lng: -3.7 }, radius: 1000 } },
    ])
  })

  test('polygon and rectangle with objects, [lat,lng] pairs and lon', () => {
    const poly = { geometry: { type: 'polygon', coordinates: [[40, -3], { lat: 40, lon: -2 }, { lat: 41, lng: -2 }] } }
    expect(parseArea(poly)).toEqual({
      geometry: {
        type: 'polygon',
        coordinates: [
          { lat: 40, lng: -3 },
          { lat: 40, lng: -2 },
          { lat: 41, lng: -2 },
        ],
      },
    })
    expect(
      parseArea({
        geometry: {
          type: 'rectangle',
          coordinates: [
            [40, -3],
            [40, -2],
            [41, -2],
            [41, -3],
          ],
        },
      }),
    ).toMatchObject({ geometry: { type: 'rectangle' } })
  })

  test('polygons need at least three distinct coordinates', () => {
    expect(
      parseArea({
        geometry: {
          type: 'polygon',
          coordinates: [
            [40, -3],
            [40, -2],
          ],
        },
      }),
    ).toBeNull()
    expect(
      parseArea({
        geometry: {
          type: 'polygon',
          coordinates: [
            [40, -3],
            [40, -2],
            [40, -3],
          ],
        },
      }),
    ).toBeNull()
  })

  test('point and marker default to 500 m', () => {
    expect(parseArea({ type: 'point', position: { lat: 40, lng: -3 } })).toEqual({ type: 'point', position: { lat: 40, lng: -3 }, radius: 500 })
    expect(parseArea({ type: 'marker', position: [40, -3], radius: 50 })).toEqual({ type: 'marker', position: { lat: 40, lng: -3 }, radius: 50 })
  })

  test('unrecognised or invalid elements are dropped, the rest kept', () => {
    const raw = JSON.stringify([
      { geometry: { type: 'hexagon' } },
      { geometry: { type: 'circle', center: { lat: 100, lng: 0 }, radius: 10 } },
      { geometry: { type: 'circle', center: { lat: 1, lng: 0 }, radius: -1 } },
      { geometry: { type: 'circle', center: { lat: '1', lng: 0 }, radius: 5 } },
      'text',
      null,
      { type: 'point', position: { lat: 1, lng: 2 } },
    ])
    expect(parseLocations(raw)).toEqual([{ type: 'point', position: { lat: 1, lng: 2 }, radius: 500 }])
  })

  test('SQL form: circles by centre and radius, polygons closed in lng-lat order, each with its box', () => {
    expect(toSqlArea({ type: 'point', position: { lat: 40, lng: -3 }, radius: 500 })).toMatchObject({ kind: 'circle', lat: 40, lng: -3, radius: 500 })
    expect(
      toSqlArea({
        geometry: {
          type: 'polygon',
          coordinates: [
            { lat: 40, lng: -3 },
            { lat: 40, lng: -2 },
            { lat: 41, lng: -2 },
          ],
        },
      }),
    ).toEqual({
      kind: 'polygon',
      wkt: 'SRID=4326;POLYGON((-3 40,-2 40,-2 41,-3 40))',
      box: { west: -3, south: 40, east: -2, north: 41 },
    })
  })

  test('an axis-aligned rectangle, in any corner order, is a box; a bow tie of the same corners stays a polygon', () => {
    const [sw, se, ne, nw] = [
      { lat: 40, lng: -3 },
      { lat: 40, lng: -2 },
      { lat: 41, lng: -2 },
      { lat: 41, lng: -3 },
    ]
    const box = { kind: 'box' as const, box: { west: -3, south: 40, east: -2, north: 41 } }
    expect(toSqlArea({ geometry: { type: 'rectangle', coordinates: [sw, se, ne, nw] } })).toEqual(box)
    expect(toSqlArea({ geometry: { type: 'polygon', coordinates: [ne, nw, sw, se, ne] } })).toEqual(box)
    expect(toSqlArea({ geometry: { type: 'polygon', coordinates: [sw, ne, se, nw] } }).kind).toBe('polygon')
  })

  test('a circle box: around the centre, wider in longitude away from the equator, whole bands at a pole or the antimeridian', () => {
    const madrid = circleBox({ lat: 40.4, lng: -3.7 }, 3000)
    expect(madrid.south).toBeLessThan(40.4 - 3000 / 111_500)
    expect(madrid.north).toBeGreaterThan(40.4 + 3000 / 111_500)
    expect(madrid.east - -3.7).toBeGreaterThan(3000 / (111_500 * Math.cos((40.4 * Math.PI) / 180)))
    expect(madrid.east - madrid.west).toBeLessThan(0.1)
    expect(circleBox({ lat: 89.99, lng: 0 }, 5000)).toMatchObject({ west: -180, east: 180, north: 90 })
    expect(circleBox({ lat: 10, lng: 179.99 }, 5000)).toMatchObject({ west: -180, east: 180 })
    expect(circleBox({ lat: 0, lng: 0 }, 30_000_000)).toEqual({ west: -180, south: -90, east: 180, north: 90 })
  })
})
