/**
 * The box a circle filter keeps before its exact test (shared/listings/geo.ts circleBox) must hold
 * every point PostGIS puts within the radius, or the list would lose listings. PostGIS places the
 * points: ST_Project walks `radius` metres on the spheroid from the centre at each azimuth, the
 * farthest a listing inside the circle can be.
 */
import { afterAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import { circleBox } from '../../shared/listings/geo'

const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
afterAll(() => sql.end({ timeout: 1 }))

/** A small deterministic generator: the same circles on every run. */
function prng(seed: number) {
  let s = seed >>> 0
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
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
    from unnest(${circles.map((c) => c.lat)}::float8[], ${circles.map((c) => c.lng)}::float8[], ${circles.map((c) => c.radius)}::float8[]) with ordinality as c(lat, lng, radius, i)
    cross join generate_series(0, 35) a
    cross join lateral (select st_project(st_setsrid(st_makepoint(c.lng, c.lat), 4326)::geography, c.radius, radians(a * 10)) as p) x`
  expect(rows.length).toBe(400 * 36)
  const outside = rows.filter(({ i, lat, lng }) => {
    const b = circleBox(circles[i - 1], circles[i - 1].radius)
    return lat < b.south || lat > b.north || lng < b.west || lng > b.east
  })
  expect(outside).toEqual([])
})
