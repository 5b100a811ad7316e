-- Polygons and rectangles of `locations` test the planar point (geog::geometry): this index
-- answers them as catalogue_business_geog_gist answers circles.
CREATE INDEX "catalogue_business_geom_gist" ON "catalogue_entries" USING gist ("business_id",("geog"::geometry));--> statement-breakpoint
-- Only rentals have a rental kind: a sale-only listing flagged temporal_renting was stored as
-- 'temporal'. The other derived fields of old rows are rebuilt by `cli catalogue reindex`.
UPDATE "catalogue_entries" SET "rental_kind" = NULL WHERE "rental_kind" IS NOT NULL AND NOT ("operations" @> '{alquiler}'::text[]);
