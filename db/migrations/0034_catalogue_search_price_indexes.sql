-- A search with one operation and a price range finds the range's listings of that operation
-- from a price index and tests their words, instead of taking every listing holding the word
-- (the GIN's bitmap) or walking the operation's listings newest first: at 1M listings (the 100k
-- business), `piscina` + venta 300,000–500,000 read 30,079 postings and rechecked 5,713 heap
-- blocks for 4,448 matches, 44 ms; from this index, 14,794 entries, 27 ms. catalogue_entries has
-- the same indexes per operation for a price range without `q`.
CREATE INDEX "catalogue_search_venta_sale_idx" ON "catalogue_search" ("business_id", "price_sale") WHERE "operations" @> '{venta}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_search_alquiler_rent_idx" ON "catalogue_search" ("business_id", "price_rent") WHERE "operations" @> '{alquiler}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_search_traspaso_transfer_idx" ON "catalogue_search" ("business_id", "price_transfer") WHERE "operations" @> '{traspaso}'::text[];
