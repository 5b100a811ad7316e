/**
 * Public coordinates a few 1e-300° from 0 (valid input: any number in range) once filled a page of
 * the catalogue's GiST with boxes whose area underflows float8, and PostgreSQL then refused every
 * insert into that part of the index with "value out of range: underflow" (a 500 on publish for
 * any business). The published point takes such coordinates as 0 (indexableCoord).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import { createDatabase } from '../../db/client'
import { syncCatalogueSlice } from '../../shared/listings/catalogue-rebuild'

const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
const database = createDatabase(process.env.DATABASE_URL!, { max: 2 })
let businessId: number

beforeAll(async () => {
  ;[{ id: businessId }] = await sql`insert into businesses (name) values ('tiny-coordinates') returning id`
})
afterAll(async () => {
  await sql`delete from businesses where id = ${businessId}`
  await Promise.all([sql.end({ timeout: 1 }), database.sql.end({ timeout: 1 })])
})

const publish = (coordinates: string) => sql`
  insert into properties (business_id, operations, type, title, location, area, published_at)
  select ${businessId}, '{venta}', 'casa', 't',
    json_build_object('city', 'x', 'visibility', 'public', 'coordinates', json_build_object('latitude', lat, 'longitude', lon)), '{"total":1}', now()
  from (${sql.unsafe(coordinates)}) as c(lat, lon)`

test('600 public points within 1e-297° of 0 and then one in Madrid are all published; the tiny ones at 0', async () => {
  // 300 such points were enough to make the GiST's next insert fail (PostgreSQL 15).
  await publish(`select ((i % 7) - 3) * 1e-300::float8, ((i % 11) - 5) * 1e-300::float8 from generate_series(1, 600) i`)
  await publish(`select 40.4168::float8, -3.7038::float8`)
  for (let afterId = 0; ; ) {
    const batch = await syncCatalogueSlice(database.db, { businessId, afterId, batchSize: 250 })
    if (batch.lastId === null) break
    afterId = batch.lastId
  }
  const points = await sql<{ lat: number; lon: number; n: number }[]>`
    select (doc->>'lat')::float8 as lat, (doc->>'lon')::float8 as lon, count(*)::int as n from catalogue_entries
    where business_id = ${businessId} and st_y(geog::geometry) = (doc->>'lat')::float8 and st_x(geog::geometry) = (doc->>'lon')::float8
    group by 1, 2 order by 1`
  expect([...points]).toEqual([
    { lat: 0, lon: 0, n: 600 },
    { lat: 40.4168, lon: -3.7038, n: 1 },
  ])
})
