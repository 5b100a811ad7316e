-- The catalogue's filtered lists read their matches from indexes alone (index-only scans). A
-- business's listings are spread over the whole table, so each match read from the heap was
-- its own 8 KB block: with 1M listings a city-wide polygon of a 100,000-listing business read
-- ~5,000 blocks twice (count and page) per request. Measured with `bun run bench catalogue
-- --businesses 1000` (docs/properties.md "Indexes").
--
-- Areas: `pt`, the published point as a PostgreSQL `point` kept from `geog`, in a GiST whose
-- opclass can return it (PostGIS's cannot) and which INCLUDEs the exact point and the sort key.
-- The list keeps the area's bounding box from this index, then tests the exact shape on the
-- INCLUDEd `geog`. It replaces the two PostGIS GiSTs.
DROP INDEX "catalogue_business_geog_gist";--> statement-breakpoint
DROP INDEX "catalogue_business_geom_gist";--> statement-breakpoint
-- Adding a stored generated column rewrites the table under an exclusive lock (the whole migration: 34 s for 1M rows
-- on 2 cores, docs/operations.md "Migrations that rewrite a table").
ALTER TABLE "catalogue_entries" ADD COLUMN "pt" "point" GENERATED ALWAYS AS (point(st_x((geog)::geometry), st_y((geog)::geometry))) STORED;--> statement-breakpoint
CREATE INDEX "catalogue_business_pt_gist" ON "catalogue_entries" USING gist ("business_id","pt") INCLUDE ("geog","updated_at","property_id");--> statement-breakpoint
-- The default order's index carries the filter columns, so a filter in that order (a price range,
-- an operation, bedrooms, type, status, featured) walks it until the page is full without the
-- heap (a wide price range stops after a few hundred entries); the ascending price indexes
-- INCLUDE updated_at, so a narrow range reads its matches there and keeps the top 100. The
-- planner picks by the range's estimated size.
DROP INDEX "catalogue_business_updated_idx";--> statement-breakpoint
CREATE INDEX "catalogue_business_updated_idx" ON "catalogue_entries" USING btree ("business_id","updated_at" DESC NULLS LAST,"property_id" DESC NULLS LAST) INCLUDE ("operations","price_sale","price_rent","price_transfer","bedrooms","type","status","is_featured");--> statement-breakpoint
DROP INDEX "catalogue_sale_asc_idx";--> statement-breakpoint
CREATE INDEX "catalogue_sale_asc_idx" ON "catalogue_entries" USING btree ("business_id","price_sale","property_id" DESC NULLS LAST) INCLUDE ("updated_at");--> statement-breakpoint
DROP INDEX "catalogue_venta_sale_asc_idx";--> statement-breakpoint
CREATE INDEX "catalogue_venta_sale_asc_idx" ON "catalogue_entries" USING btree ("business_id","price_sale","property_id" DESC NULLS LAST) INCLUDE ("updated_at") WHERE operations @> '{venta}'::text[];--> statement-breakpoint
DROP INDEX "catalogue_alquiler_rent_asc_idx";--> statement-breakpoint
CREATE INDEX "catalogue_alquiler_rent_asc_idx" ON "catalogue_entries" USING btree ("business_id","price_rent","property_id" DESC NULLS LAST) INCLUDE ("updated_at") WHERE operations @> '{alquiler}'::text[];--> statement-breakpoint
DROP INDEX "catalogue_traspaso_transfer_asc_idx";--> statement-breakpoint
CREATE INDEX "catalogue_traspaso_transfer_asc_idx" ON "catalogue_entries" USING btree ("business_id","price_transfer","property_id" DESC NULLS LAST) INCLUDE ("updated_at") WHERE operations @> '{traspaso}'::text[];--> statement-breakpoint
-- City + type (+ min bedrooms): counted and its page sorted from the index.
DROP INDEX "catalogue_business_city_idx";--> statement-breakpoint
CREATE INDEX "catalogue_business_city_idx" ON "catalogue_entries" USING btree ("business_id","city_lc","type") INCLUDE ("bedrooms","updated_at","property_id");--> statement-breakpoint
-- Per-operation totals beside the business's: a list filtered by one operation alone reads its
-- total here. The statement-level triggers of migration 0003 now keep all four.
ALTER TABLE "catalogue_counts" ADD COLUMN "venta" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "catalogue_counts" ADD COLUMN "alquiler" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "catalogue_counts" ADD COLUMN "traspaso" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE OR REPLACE FUNCTION catalogue_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_counts (business_id, entries, venta, alquiler, traspaso)
  SELECT business_id, count(*), count(*) FILTER (WHERE operations @> '{venta}'), count(*) FILTER (WHERE operations @> '{alquiler}'), count(*) FILTER (WHERE operations @> '{traspaso}')
  FROM new_rows GROUP BY business_id ORDER BY business_id
  ON CONFLICT (business_id) DO UPDATE SET entries = catalogue_counts.entries + excluded.entries, venta = catalogue_counts.venta + excluded.venta,
    alquiler = catalogue_counts.alquiler + excluded.alquiler, traspaso = catalogue_counts.traspaso + excluded.traspaso;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION catalogue_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalogue_counts c SET entries = c.entries - d.n, venta = c.venta - d.venta, alquiler = c.alquiler - d.alquiler, traspaso = c.traspaso - d.traspaso
  FROM (SELECT business_id, count(*) AS n, count(*) FILTER (WHERE operations @> '{venta}') AS venta, count(*) FILTER (WHERE operations @> '{alquiler}') AS alquiler,
          count(*) FILTER (WHERE operations @> '{traspaso}') AS traspaso
        FROM old_rows GROUP BY business_id) d
  WHERE c.business_id = d.business_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION catalogue_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A row moving to another business, or changing its operations, changes a count.
  INSERT INTO catalogue_counts (business_id, entries, venta, alquiler, traspaso)
  SELECT business_id, sum(n), sum(venta), sum(alquiler), sum(traspaso) FROM (
    SELECT business_id, 1 AS n, (operations @> '{venta}')::int AS venta, (operations @> '{alquiler}')::int AS alquiler, (operations @> '{traspaso}')::int AS traspaso FROM new_rows
    UNION ALL SELECT business_id, -1, -(operations @> '{venta}')::int, -(operations @> '{alquiler}')::int, -(operations @> '{traspaso}')::int FROM old_rows
  ) x GROUP BY business_id HAVING sum(n) <> 0 OR sum(venta) <> 0 OR sum(alquiler) <> 0 OR sum(traspaso) <> 0 ORDER BY business_id
  ON CONFLICT (business_id) DO UPDATE SET entries = catalogue_counts.entries + excluded.entries, venta = catalogue_counts.venta + excluded.venta,
    alquiler = catalogue_counts.alquiler + excluded.alquiler, traspaso = catalogue_counts.traspaso + excluded.traspaso;
  RETURN NULL;
END $$;--> statement-breakpoint
INSERT INTO catalogue_counts (business_id, entries, venta, alquiler, traspaso)
SELECT business_id, count(*), count(*) FILTER (WHERE operations @> '{venta}'), count(*) FILTER (WHERE operations @> '{alquiler}'), count(*) FILTER (WHERE operations @> '{traspaso}')
FROM catalogue_entries GROUP BY business_id
ON CONFLICT (business_id) DO UPDATE SET entries = excluded.entries, venta = excluded.venta, alquiler = excluded.alquiler, traspaso = excluded.traspaso;
