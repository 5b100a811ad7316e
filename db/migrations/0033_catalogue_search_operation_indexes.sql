-- A search filtered by one operation walks that operation's listings alone, newest first: a
-- partial recency index per operation, as catalogue_entries has its per-operation price indexes.
-- Two common words with `operation=venta` at 1M listings (the 100k business): 28 → 14 ms alone.
CREATE INDEX "catalogue_search_venta_updated_idx" ON "catalogue_search" ("business_id", "updated_at" DESC NULLS LAST, "property_id" DESC NULLS LAST) WHERE "operations" @> '{venta}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_search_alquiler_updated_idx" ON "catalogue_search" ("business_id", "updated_at" DESC NULLS LAST, "property_id" DESC NULLS LAST) WHERE "operations" @> '{alquiler}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_search_traspaso_updated_idx" ON "catalogue_search" ("business_id", "updated_at" DESC NULLS LAST, "property_id" DESC NULLS LAST) WHERE "operations" @> '{traspaso}'::text[];
