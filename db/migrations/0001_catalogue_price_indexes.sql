DROP INDEX "catalogue_business_sale_idx";--> statement-breakpoint
DROP INDEX "catalogue_business_rent_idx";--> statement-breakpoint
CREATE INDEX "catalogue_sale_asc_idx" ON "catalogue_entries" USING btree ("business_id","price_sale","property_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "catalogue_sale_desc_idx" ON "catalogue_entries" USING btree ("business_id","price_sale" DESC NULLS LAST,"property_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "catalogue_venta_sale_asc_idx" ON "catalogue_entries" USING btree ("business_id","price_sale","property_id" DESC NULLS LAST) WHERE operations @> '{venta}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_venta_sale_desc_idx" ON "catalogue_entries" USING btree ("business_id","price_sale" DESC NULLS LAST,"property_id" DESC NULLS LAST) WHERE operations @> '{venta}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_alquiler_rent_asc_idx" ON "catalogue_entries" USING btree ("business_id","price_rent","property_id" DESC NULLS LAST) WHERE operations @> '{alquiler}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_alquiler_rent_desc_idx" ON "catalogue_entries" USING btree ("business_id","price_rent" DESC NULLS LAST,"property_id" DESC NULLS LAST) WHERE operations @> '{alquiler}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_traspaso_transfer_asc_idx" ON "catalogue_entries" USING btree ("business_id","price_transfer","property_id" DESC NULLS LAST) WHERE operations @> '{traspaso}'::text[];--> statement-breakpoint
CREATE INDEX "catalogue_traspaso_transfer_desc_idx" ON "catalogue_entries" USING btree ("business_id","price_transfer" DESC NULLS LAST,"property_id" DESC NULLS LAST) WHERE operations @> '{traspaso}'::text[];