/**
 * The boxes of the area filters (shared/listings/geo.ts) against PostGIS. A circle's box, kept
 * before the exact test, must hold every point PostGIS puts within the radius, or the list would
 * lose listings: ST_Project walks `radius` metres on the spheroid from the centre at each azimuth,
 * the farthest a listing inside the circle can be. A rectangle's test is its box alone, so it must
 * answer what ST_Intersects answers for every point, edges and corners included.
 */
import { afterAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import { circleBox, toSqlArea } from '../../shared/listings/geo'

const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
afterAll(() => sql.end({ timeout: 1 }))

/** A small deterministic generator: the same circles on every run. */
function prng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

test('every point at the radius, in every direction, lies inside the circle box', async () => {
  const r = prng(19)
  const circles = Array.from({ length: 400 }, (_, i) => ({
    lat: i % 10 === 0 ? 80 + r() * 9.9 : (r() - 0.5) * 170,
    lng: (r() - 0.5) * 359,
    radius: [5, 500, 3000, 50_000, 900_000][i % 5] * (0.5 + r()),
  }))
  const rows = await sql<{ i: number; lat: number; lng: number }[]>`
    select c.i, st_y(p::geometry) as lat, st_x(p::geometry) as lng
    from unnest(${circles.map((c) => c.lat)}::float8[], ${circles.map((c) => c.lng)}::float8[], ${circles.map((c) => c.radius)}::float8[])
      with ordinality as c(lat, lng, radius, i)
    cross join generate_series(0, 35) a
    cross join lateral (select st_project(st_setsrid(st_makepoint(c.lng, c.lat), 4326)::geography, c.radius, radians(a * 10)) as p) x`
  expect(rows.length).toBe(400 * 36)
  const outside = rows.filter(({ i, lat, lng }) => {
    const b = circleBox(circles[i - 1], circles[i - 1].radius)
    return lat < b.south || lat > b.north || lng < b.west || lng > b.east
  })
  expect(outside).toEqual([])
})

test('a rectangle answered by its box matches ST_Intersects on inside, outside, edge and corner points', async () => {
  const r = prng(23)
  const cases: { lat: number; lng: number; s: number; w: number; n: number; e: number }[] = []
  for (let i = 0; i < 200; i++) {
    const [s, w] = [(r() - 0.5) * 170, (r() - 0.5) * 350]
    const [n, e] = [s + r() * 5, w + r() * 5]
    const area = toSqlArea({
      geometry: {
        type: 'rectangle',
        coordinates: [
          { lat: s, lng: w },
          { lat: s, lng: e },
          { lat: n, lng: e },
          { lat: n, lng: w },
        ],
      },
    })
    expect(area).toEqual({ kind: 'box', box: { west: w, south: s, east: e, north: n } })
    const near = (lo: number, hi: number) => [lo, hi, lo + (hi - lo) * r(), lo - 1e-12, hi + 1e-12, lo - r(), hi + r()]
    for (const lat of near(s, n)) for (const lng of near(w, e)) cases.push({ lat, lng, s, w, n, e })
  }
  const rows = await sql<{ postgis: boolean; box: boolean }[]>`
    select st_intersects(st_setsrid(st_makepoint(c.lng, c.lat), 4326), st_makeenvelope(c.w, c.s, c.e, c.n, 4326)) as postgis,
      (point(c.lng, c.lat))[0] between c.w and c.e and (point(c.lng, c.lat))[1] between c.s and c.n as box
    from unnest(${cases.map((c) => c.lat)}::float8[], ${cases.map((c) => c.lng)}::float8[], ${cases.map((c) => c.s)}::float8[],
      ${cases.map((c) => c.w)}::float8[], ${cases.map((c) => c.n)}::float8[], ${cases.map((c) => c.e)}::float8[]) as c(lat, lng, s, w, n, e)`
  expect(rows.length).toBe(cases.length)
  expect(rows.filter((row) => row.postgis !== row.box)).toEqual([])
  expect(rows.filter((row) => row.box).length).toBeGreaterThan(cases.length / 8)
})
