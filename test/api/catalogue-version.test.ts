/**
 * The catalogue version (architecture.md "Catalogue version", contract §12 `<date>`, ETag): a
 * per-business counter bumped by every transaction that changes a published listing or its
 * media, and per catalogue row a `changed_at` that moves whenever the row's public document does.
 * A rebuild that changes nothing moves nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { businesses } from '../../db/schema'
import { removeCatalogueEntry } from '../../shared/listings/catalogue-rebuild'
import { rebuildCatalogueBatch, rebuildCatalogueEntry, reindexCatalogue } from '../../shared/listings/operations'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { smallWebp, uploadFiles, waitForUpload } from '../helpers/images'
import { createProperty, createPublished } from '../helpers/properties'

let ctx: TestContext
let workers: RunningWorkers
let biz: SeededBusiness
let bystander: SeededBusiness
let dataDir: string

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'catalogue-version-'))
  ctx = await createTestContext({ DATA_DIR: dataDir, STORAGE_DRIVER: 'local', PUBLIC_URL: 'http://127.0.0.1:3999', IMAGE_THREADS: '1' })
  workers = await startWorkers(ctx.config, createLogger('silent'), ['upload-complete', 'image-watermark', 'catalogue-reindex'])
  biz = await seedBusiness(ctx)
  bystander = await seedBusiness(ctx)
})
afterAll(async () => {
  await workers?.close(5000)
  await ctx?.close()
  await rm(dataDir, { recursive: true, force: true })
})

/** The business's catalogue version (the feed's ETag and Last-Modified) and when it last moved. */
async function catalogueVersionOf(db: Db, businessId: number): Promise<{ version: number; changedAt: Date }> {
  const [row] = await db
    .select({ version: businesses.catalogueVersion, changedAt: businesses.catalogueChangedAt })
    .from(businesses)
    .where(eq(businesses.id, businessId))
  return row ?? { version: 0, changedAt: new Date(0) }
}

const version = (businessId = biz.id) => catalogueVersionOf(ctx.deps.database.db, businessId)
/** Microseconds since the epoch (a JS Date would round two quick changes to the same millisecond). */
const micros = (column: string) => `(extract(epoch from ${column}) * 1000000)::bigint::text`
async function rowChangedAt(propertyId: number): Promise<bigint | null> {
  const rows = await ctx.deps.database.sql.unsafe<{ us: string }[]>(`select ${micros('changed_at')} as us from catalogue_entries where property_id = $1`, [
    propertyId,
  ])
  return rows[0] ? BigInt(rows[0].us) : null
}
async function businessChangedAt(businessId = biz.id): Promise<bigint> {
  const rows = await ctx.deps.database.sql.unsafe<{ us: string }[]>(`select ${micros('catalogue_changed_at')} as us from businesses where id = $1`, [
    businessId,
  ])
  return BigInt(rows[0].us)
}

/** Runs `step` and returns how the business's version and the row's changed_at moved. */
async function across(propertyId: number, step: () => Promise<unknown>) {
  const before = { v: await version(), row: await rowChangedAt(propertyId), at: await businessChangedAt() }
  await step()
  const after = { v: await version(), row: await rowChangedAt(propertyId), at: await businessChangedAt() }
  return { bumps: after.v.version - before.v.version, before, after }
}

describe('catalogue version and changed_at', () => {
  let id: number

  test('a new business starts at version 0; a draft changes nothing public', async () => {
    const v = await version()
    expect(v.version).toBe(0)
    expect(v.changedAt).toBeInstanceOf(Date)
    const draft = await createProperty(ctx, biz.apiKey)
    const patch = await across(draft, () => call(ctx.app, 'PATCH', `/v1/properties/${draft}`, { key: biz.apiKey, body: { title: 'Otro título' } }))
    expect(patch.bumps).toBe(0)
    expect(patch.after.at).toBe(patch.before.at)
    expect(patch.after.v.changedAt).toEqual(v.changedAt)
    id = draft
  })

  test('publish bumps the version once and gives the row a changed_at', async () => {
    const r = await across(id, async () => expect((await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: biz.apiKey })).status).toBe(200))
    expect(r.bumps).toBe(1)
    expect(r.before.row).toBeNull()
    expect(r.after.row).not.toBeNull()
    expect(r.after.at).toBeGreaterThan(r.before.at)
  })

  test('PATCH of a published listing bumps the version and moves changed_at', async () => {
    const r = await across(id, async () =>
      expect((await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: biz.apiKey, body: { title: 'Ático reformado' } })).status).toBe(200),
    )
    expect(r.bumps).toBe(1)
    expect(r.after.row!).toBeGreaterThan(r.before.row!)
    expect(r.after.at).toBeGreaterThan(r.before.at)
  })

  test('an image becoming ready bumps the version and moves changed_at (media are part of the document)', async () => {
    const before = { v: await version(), row: await rowChangedAt(id), at: await businessChangedAt() }
    const upload = await uploadFiles(ctx, biz.apiKey, id, [{ filename: 'salon.webp', content_type: 'image/webp', body: await smallWebp() }])
    const done = await waitForUpload(ctx, biz.apiKey, id, upload.uploadId)
    expect(done.body.data.files.map((f: { state: string }) => f.state)).toEqual(['ready'])
    const doc = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })
    expect(doc.body.data.images).toHaveLength(1)
    const after = await eventually(async () => {
      const v = await version()
      return v.version > before.v.version && v
    })
    expect(after.version - before.v.version).toBe(1)
    expect((await rowChangedAt(id))!).toBeGreaterThan(before.row!)
    expect(await businessChangedAt()).toBeGreaterThan(before.at)
  })

  test('rebuilds that change nothing bump nothing and leave changed_at alone', async () => {
    const one = await across(id, () => rebuildCatalogueEntry(ctx.deps, id))
    expect(one.bumps).toBe(0)
    expect(one.after.row).toEqual(one.before.row)
    expect(one.after.at).toBe(one.before.at)
    const all = await across(id, () => reindexCatalogue(ctx.deps, { businessId: biz.id, batchSize: 1 }))
    expect(all.bumps).toBe(0)
    expect(all.after.row).toEqual(all.before.row)
  })

  test('a batch rebuild that repairs a stale document bumps once and moves that row only', async () => {
    const second = await createPublished(ctx, biz.apiKey, { title: 'Segundo' })
    await ctx.deps.database.db.execute(sql`update catalogue_entries set doc = (doc::jsonb || '{"title":"viejo"}')::json where property_id = ${id}`)
    const untouched = await rowChangedAt(second)
    const r = await across(id, () => rebuildCatalogueBatch(ctx.deps, { businessId: biz.id, afterId: 0, batchSize: 100 }))
    expect(r.bumps).toBe(1)
    expect(r.after.row!).toBeGreaterThan(r.before.row!)
    expect(await rowChangedAt(second)).toBe(untouched)
    const doc = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })
    expect(doc.body.data.title).toBe('Ático reformado')
  })

  test('unpublish bumps the version and removes the row; doing it again changes nothing', async () => {
    const r = await across(id, async () => expect((await call(ctx.app, 'POST', `/v1/properties/${id}/unpublish`, { key: biz.apiKey })).status).toBe(200))
    expect(r.bumps).toBe(1)
    expect(r.after.row).toBeNull()
    expect(r.after.at).toBeGreaterThan(r.before.at)
    const again = await across(id, async () => expect((await call(ctx.app, 'POST', `/v1/properties/${id}/unpublish`, { key: biz.apiKey })).status).toBe(200))
    expect(again.bumps).toBe(0)
    expect((await across(id, () => rebuildCatalogueEntry(ctx.deps, id))).bumps).toBe(0)
  })

  test('a listing taken out before its property row is deleted bumps the version (the cascade alone would not)', async () => {
    const doomed = await createPublished(ctx, biz.apiKey, { title: 'Para borrar' })
    const r = await across(doomed, () =>
      ctx.deps.database.db.transaction(async (tx) => {
        await removeCatalogueEntry(tx, doomed)
        await tx.execute(sql`delete from properties where id = ${doomed}`)
      }),
    )
    expect(r.bumps).toBe(1)
    expect(r.after.row).toBeNull()
  })

  test('concurrent batch rebuilds over the same businesses neither deadlock nor lose a bump', async () => {
    const owners = [await seedBusiness(ctx), await seedBusiness(ctx), await seedBusiness(ctx)]
    const ownerIds = owners.map((o) => o.id)
    const inserted = await ctx.deps.database.sql<{ id: number }[]>`
      insert into properties (business_id, operations, type, title, location, area, published_at)
      select (${ownerIds}::int[])[1 + g % 3], '{venta}', 'casa', 'Casa ' || g, '{"city":"Murcia"}', '{"total":90}', now()
      from generate_series(1, 240) g returning id`
    const ids = inserted.map((r) => r.id).sort((a, b) => a - b)
    // Four lanes over interleaved id ranges: every batch touches all three businesses.
    const lanes = [0, 1, 2, 3].map((k) => ({ after: ids[k * 60] - 1, before: k === 3 ? undefined : ids[(k + 1) * 60] }))
    const before = await Promise.all(ownerIds.map((b) => version(b)))
    const batches = await Promise.all(
      lanes.map(async ({ after, before: beforeId }) => {
        let n = 0
        for (let afterId = after; ; n++) {
          const r = await rebuildCatalogueBatch(ctx.deps, { afterId, beforeId, batchSize: 6 })
          if (r.lastId === null) return n
          afterId = r.lastId
        }
      }),
    )
    const after = await Promise.all(ownerIds.map((b) => version(b)))
    // A batch bumps each business it changed once: every batch here holds rows of the three.
    const total = batches.reduce((a, b) => a + b, 0)
    for (let i = 0; i < 3; i++) {
      expect(after[i].version - before[i].version).toBeGreaterThan(0)
      expect(after[i].version - before[i].version).toBeLessThanOrEqual(total)
    }
    const [{ n }] = await ctx.deps.database.sql<{ n: number }[]>`select count(*)::int as n from catalogue_entries where property_id = any(${ids}::int[])`
    expect(n).toBe(240)
  })

  test("another business's version never moved", async () => {
    expect((await version(bystander.id)).version).toBe(0)
  })
})
