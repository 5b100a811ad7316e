/**
 * A search's work is bounded whatever its number of matches (contract §11, design/search.md):
 * the plans of the list statement, run with EXPLAIN (ANALYZE, BUFFERS) over a business of
 * 100,000 listings, read and touch no more than fixed ceilings for its commonest word, a rare
 * word, a phrase and a word with `sort`. The listings live in this file's own schema (a copy of
 * catalogue_entries with its indexes), so the statistics are this data's alone: loaded fresh,
 * never analyzed, then with the statistics the product gathers after a bulk rebuild.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { catalogueListSql } from '../../db/queries/catalogue/list'
import { analyzeCatalogueWhenDue } from '../../db/queries/catalogue/rebuild'
import { catalogueQueryOf, type ListParams } from '../../shared/listings/catalogue-filters'
import { reindexCatalogue } from '../../shared/listings/operations'
import { createTestContext, eventually, seedBusiness } from '../helpers/context'
import { createPublished } from '../helpers/properties'

const LISTINGS = 100_000
const BUSINESS = 1
const schema = `search_plan_${randomBytes(4).toString('hex')}`
let sql: postgres.Sql

/** Catalogue rows of one business: piscina in 30% of descriptions, garaje in 25%, palomar in 1 of 5,003. */
async function seedSearchRows(db: postgres.Sql, table: string, businessId: number, rows: number): Promise<void> {
  await db.unsafe(`
    insert into ${table} (property_id, business_id, doc, status, operations, type, bedrooms, is_featured, price_sale, price_rent, updated_at, tsv)
    select g, ${businessId}, d.doc, 'disponible', case when g % 4 = 0 then '{alquiler}'::text[] else '{venta}'::text[] end, 'casa', g % 5, false,
      case when g % 4 = 0 then null else 50000 + (g::bigint * 7919) % 950000 end, case when g % 4 = 0 then 400 + (g::bigint * 7919) % 3600 end,
      timestamptz '2026-01-01' + ((g::bigint * 104729) % ${rows}) * interval '1 minute', catalogue_search_vector(d.doc)
    from generate_series(1, ${rows}) g
    cross join lateral (select jsonb_build_object('id', g, 'title', 'Propiedad ' || g, 'city', 'Murcia',
      'description', '<p>Vivienda luminosa y reformada.'
        || case when g % 10 < 3 then ' Urbanización con <b>piscina</b> comunitaria.' else '' end
        || case when g % 20 >= 5 and g % 20 < 10 then ' Plaza de garaje incluida.' else '' end
        || case when g % 5003 = 1 then ' Antiguo palomar restaurado.' else '' end || '</p>') as doc) d`)
}

beforeAll(async () => {
  sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {}, connection: { search_path: `${schema}, public` } })
  await sql.unsafe(`create schema ${schema}`)
  await sql.unsafe(`create table ${schema}.catalogue_entries (like public.catalogue_entries including all)`)
  // The search's own copy (catalogue_search, kept by catalogue_entries' triggers in public), here
  // unpartitioned: one business lives in one partition anyway.
  await sql.unsafe(`create table ${schema}.catalogue_search (like public.catalogue_search including all)`)
  await seedSearchRows(sql, `${schema}.catalogue_entries`, BUSINESS, LISTINGS)
  await sql.unsafe(`insert into ${schema}.catalogue_search select business_id, property_id, updated_at, status, operations, type, subtype_key, city_lc,
    price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, tsv from ${schema}.catalogue_entries`)
}, 120_000)

afterAll(async () => {
  await sql.unsafe(`drop schema if exists ${schema} cascade`)
  await sql.end({ timeout: 2 })
})

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  'Rows Removed by Index Recheck'?: number
  'Shared Hit Blocks': number
  'Shared Read Blocks': number
  Plans?: PlanNode[]
}

/** The plan of the list statement for these parameters, run (ANALYZE) in this file's schema. */
async function planOf(db: postgres.Sql, params: ListParams, businessId = BUSINESS): Promise<PlanNode> {
  const { text, params: values } = catalogueListSql(catalogueQueryOf(businessId, params).query)
  const [row] = await db.unsafe(`explain (analyze, buffers, format json) ${text}`, values as never[])
  return (row['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)]

/** The most rows one scan of the catalogue's tables read (kept or removed by a filter or a recheck). */
function rowsRead(plan: PlanNode): number {
  const scans = nodes(plan).filter((n) => n['Relation Name'] === 'catalogue_entries' || n['Relation Name'] === 'catalogue_search')
  return Math.max(0, ...scans.map((n) => n['Actual Rows'] * n['Actual Loops'] + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)))
}

/** Buffers the whole statement touched (the root's counts include every child and sub-plan). */
const buffersOf = (plan: PlanNode) => plan['Shared Hit Blocks'] + plan['Shared Read Blocks']

const describePlan = (plan: PlanNode) =>
  nodes(plan)
    .map(
      (n) =>
        `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''} ` +
        `rows=${n['Actual Rows']}x${n['Actual Loops']} removed=${n['Rows Removed by Filter'] ?? 0}`,
    )
    .join('\n')

describe('statistics: the product gathers them after a bulk change (autovacuum may be off or late)', () => {
  test('a fresh table without statistics: the planner cannot tell a common word, and reads the whole business', async () => {
    const plan = await planOf(sql, { q: 'piscina' })
    expect(rowsRead(plan), describePlan(plan)).toBeGreaterThan(50_000)
  })

  test('a bulk rebuild (cli catalogue reindex, the last queued slice) ends by analyzing the catalogue', async () => {
    const ctx = await createTestContext()
    try {
      const biz = await seedBusiness(ctx)
      await createPublished(ctx, biz.apiKey)
      const analyses = async () =>
        (await sql`select analyze_count::int as n from pg_stat_user_tables where relid = 'public.catalogue_entries'::regclass`)[0].n as number
      const before = await analyses()
      await reindexCatalogue(ctx.deps, { businessId: biz.id, batchSize: 10 })
      await eventually(async () => (await analyses()) > before, { what: 'an ANALYZE of catalogue_entries' })
    } finally {
      await ctx.close()
    }
  })
})

describe('the work of a search is bounded by its 1,000 candidates, not by its matches', () => {
  // What the last slice of a queued reindex runs, here on this file's table (first in the search
  // path): never analyzed, it is due.
  beforeAll(() => analyzeCatalogueWhenDue(drizzle(sql)))

  // 30,000 matches: the recency walk meets 1,001 of them in ~3,340 rows, one heap block each.
  const COMMON = { rows: 5_000, buffers: 6_000 }
  const shapes: { name: string; params: ListParams; ceiling: { rows: number; buffers: number } }[] = [
    { name: 'the commonest word (30,000 matches)', params: { q: 'piscina' }, ceiling: COMMON },
    { name: 'the commonest word, last page of the bound', params: { q: 'piscina', offset: 900, limit: 100 }, ceiling: COMMON },
    { name: 'the commonest word sorted by price', params: { q: 'piscina', sort: 'price_desc', operation: 'venta' }, ceiling: COMMON },
    { name: 'a phrase of common words (rechecked on every row)', params: { q: '"piscina comunitaria"' }, ceiling: COMMON },
    // 22,500 matches; the walk of the operation's own recency index meets 1,001 in ~3,800 rows.
    { name: 'two words with an operation (22,500 matches)', params: { q: 'vivienda piscina', operation: 'venta' }, ceiling: COMMON },
    // 4,700 matches, 6.3% of the operation's listings (piscina, a fifth of the prices): the walk of
    // the operation's recency index meets 1,001 of them in ~16,000 rows whatever the business's
    // size, and the copy's price index holds the range's ~15,800 (the planner takes either).
    {
      name: 'a word with a price range (4,700 matches)',
      params: { q: 'piscina', operation: 'venta', min_price: 300_000, max_price: 500_000 },
      ceiling: { rows: 20_000, buffers: 21_000 },
    },
    { name: 'a rare word (20 matches)', params: { q: 'palomar' }, ceiling: { rows: 100, buffers: 1_000 } },
  ]
  for (const { name, params, ceiling } of shapes) {
    test(`${name}: rows read ≤ ${ceiling.rows.toLocaleString('en')}, buffers ≤ ${ceiling.buffers.toLocaleString('en')}`, async () => {
      const plan = await planOf(sql, params)
      expect(rowsRead(plan), describePlan(plan)).toBeLessThanOrEqual(ceiling.rows)
      expect(buffersOf(plan), describePlan(plan)).toBeLessThanOrEqual(ceiling.buffers)
    })
  }

  test('the answers are the bounded ones: 1,001 candidates read for a common word, all 20 for a rare one', async () => {
    const count = async (q: string) => {
      const { text, params } = catalogueListSql(catalogueQueryOf(BUSINESS, { q, limit: 1 }).query)
      const [row] = await sql.unsafe(text, params as never[])
      return row.count as number
    }
    expect(await count('piscina')).toBe(1001)
    expect(await count('palomar')).toBe(20)
  })

  test('analyzed once, the table is not due again until enough of it changes', async () => {
    const analyses = async () =>
      (await sql.unsafe(`select analyze_count::int as n from pg_stat_user_tables where relid = '${schema}.catalogue_entries'::regclass`))[0].n as number
    await eventually(async () => (await analyses()) > 0, { what: 'the first ANALYZE' })
    const once = await analyses()
    await analyzeCatalogueWhenDue(drizzle(sql))
    expect(await analyses()).toBe(once)
  })
})
