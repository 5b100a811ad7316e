/**
 * The `locations` filter of GET /properties (api-spec §4.3 rules 3–5): a JSON array of map
 * areas. Understood shapes become `Area`s, used both for the `filters` echo and for SQL;
 * anything else is dropped silently, and a parameter that is not JSON (or not an array) is
 * ignored as a whole (`null`).
 */
import type { GeoBox, SqlArea } from '../../db/queries/catalogue/statement'
import { AppError } from '../platform/errors'

export const DEFAULT_POINT_RADIUS_M = 500
/** Bounds of `locations` (contract §15 §6): areas in the array, vertices of one polygon or rectangle. */
export const MAX_AREAS = 50
export const MAX_POLYGON_VERTICES = 1000

/** Past a bound the parameter is refused (422), not ignored: it was understood, only too large. */
function tooLarge(msg: string): AppError {
  return new AppError('validation', `query.locations: ${msg}`, { errors: [{ loc: ['query', 'locations'], msg, type: 'invalid' }] })
}

export interface LatLng {
  lat: number
  lng: number
}

/** An understood area, echoed back in this canonical shape. */
export type Area =
  | { geometry: { type: 'circle'; center: LatLng; radius: number } }
  | { geometry: { type: 'polygon' | 'rectangle'; coordinates: LatLng[] } }
  | { type: 'point' | 'marker'; position: LatLng; radius: number }

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

/** `{lat, lng}`, `{lat, lon}` or `[lat, lng]`; numeric strings are not coordinates. */
export function parseLatLng(v: unknown): LatLng | null {
  let lat: unknown
  let lng: unknown
  if (Array.isArray(v)) {
    if (v.length < 2) return null
    ;[lat, lng] = v
  } else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>
    lat = o.lat
    lng = o.lng ?? o.lon
  } else return null
  if (!isNum(lat) || !isNum(lng) || lat < -90 || lat > 90 || lng < -180 || lng > 180) return null
  return { lat, lng }
}

const isRadius = (v: unknown): v is number => isNum(v) && v > 0

/** One element of `locations`; throws the 422 for a polygon past MAX_POLYGON_VERTICES. */
export function parseArea(v: unknown): Area | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null
  const o = v as Record<string, unknown>
  const g = o.geometry
  if (g && typeof g === 'object' && !Array.isArray(g)) {
    const geo = g as Record<string, unknown>
    const type = typeof geo.type === 'string' ? geo.type.toLowerCase() : ''
    if (type === 'circle') {
      const center = parseLatLng(geo.center)
      return center && isRadius(geo.radius) ? { geometry: { type: 'circle', center, radius: geo.radius } } : null
    }
    if (type === 'polygon' || type === 'rectangle') {
      if (!Array.isArray(geo.coordinates)) return null
      if (geo.coordinates.length > MAX_POLYGON_VERTICES)
        throw tooLarge(`A ${type} has at most ${MAX_POLYGON_VERTICES} vertices (got ${geo.coordinates.length})`)
      const coords = geo.coordinates.map(parseLatLng)
      if (coords.some((c) => c === null)) return null
      const distinct = new Set((coords as LatLng[]).map((c) => `${c.lat},${c.lng}`))
      return distinct.size >= 3 ? { geometry: { type, coordinates: coords as LatLng[] } } : null
    }
    return null
  }
  const type = typeof o.type === 'string' ? o.type.toLowerCase() : ''
  if (type === 'point' || type === 'marker') {
    const position = parseLatLng(o.position)
    if (!position) return null
    if (o.radius !== undefined && o.radius !== null && !isRadius(o.radius)) return null
    return { type, position, radius: (o.radius as number | undefined) ?? DEFAULT_POINT_RADIUS_M }
  }
  return null
}

/**
 * `null` when the parameter is absent or not a JSON array; otherwise the understood areas (maybe
 * none). An array of more than MAX_AREAS elements, or a polygon past its bound, is a 422.
 */
export function parseLocations(raw: string | undefined | null): Area[] | null {
  if (raw === undefined || raw === null) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return null
  }
  if (!Array.isArray(parsed)) return null
  if (parsed.length > MAX_AREAS) throw tooLarge(`At most ${MAX_AREAS} areas (got ${parsed.length})`)
  return parsed.map(parseArea).filter((a): a is Area => a !== null)
}

/** An area as the catalogue query takes it: a circle's centre and radius, or a closed planar polygon (rectangles too), each with its box. */
export function toSqlArea(a: Area): SqlArea {
  if ('position' in a) return circleArea(a.position, a.radius)
  const g = a.geometry
  if (g.type === 'circle') return circleArea(g.center, g.radius)
  const ring = [...g.coordinates]
  const first = ring[0]
  const last = ring[ring.length - 1]
  if (first.lat !== last.lat || first.lng !== last.lng) ring.push(first)
  const box = polygonBox(ring)
  if (isAxisAlignedRectangle(ring)) return { kind: 'box', box }
  return { kind: 'polygon', wkt: `SRID=4326;POLYGON((${ring.map((c) => `${c.lng} ${c.lat}`).join(',')}))`, box }
}

/**
 * A closed ring of four corners whose every edge runs along a meridian or a parallel, two
 * latitudes and two longitudes: the planar rectangle equals its box, so its test is four
 * comparisons. A bow tie of the same corners has diagonal edges and stays a polygon.
 */
function isAxisAlignedRectangle(ring: LatLng[]): boolean {
  if (ring.length !== 5) return false
  for (let i = 0; i < 4; i++) if (ring[i].lat !== ring[i + 1].lat && ring[i].lng !== ring[i + 1].lng) return false
  return new Set(ring.map((c) => c.lat)).size === 2 && new Set(ring.map((c) => c.lng)).size === 2
}

const circleArea = (c: LatLng, radius: number): SqlArea => ({ kind: 'circle', lng: c.lng, lat: c.lat, radius, box: circleBox(c, radius) })

const WHOLE_EARTH: GeoBox = { west: -180, south: -90, east: 180, north: 90 }

/** A polygon's vertices are its planar extremes: every point inside or on it lies within their min/max. */
export function polygonBox(ring: LatLng[]): GeoBox {
  let box = { west: Infinity, south: Infinity, east: -Infinity, north: -Infinity }
  for (const c of ring)
    box = { west: Math.min(box.west, c.lng), south: Math.min(box.south, c.lat), east: Math.max(box.east, c.lng), north: Math.max(box.north, c.lat) }
  return box
}

/**
 * Longitude/latitude bounds holding every point within `radius` metres (on the spheroid, as
 * ST_DWithin measures) of `c`. Sphere bounds (latitude ± r/R; longitude ± asin(sin(r/R) / cos lat),
 * which accounts for great circles bowing towards the pole) with R below the Earth's smallest
 * radius of curvature and a further 1% on the angle, so the box can only be larger than the
 * circle. A circle reaching a pole or the antimeridian gets whole bands instead: a prefilter that
 * is too wide only costs time, one too narrow would lose listings.
 */
export function circleBox(c: LatLng, radius: number): GeoBox {
  const angle = (radius / 6_335_000) * 1.01
  const south = c.lat - (angle * 180) / Math.PI
  const north = c.lat + (angle * 180) / Math.PI
  if (angle >= Math.PI / 2 || south <= -90 || north >= 90) return { ...WHOLE_EARTH, south: Math.max(-90, south), north: Math.min(90, north) }
  const ratio = Math.sin(angle) / Math.cos((c.lat * Math.PI) / 180)
  if (ratio >= 1) return { ...WHOLE_EARTH, south, north }
  const dLng = (Math.asin(ratio) * 180) / Math.PI
  const [west, east] = [c.lng - dLng, c.lng + dLng]
  if (west < -180 || east > 180) return { ...WHOLE_EARTH, south, north }
  return { west, south, east, north }
}
