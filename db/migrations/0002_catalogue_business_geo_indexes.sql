CREATE EXTENSION IF NOT EXISTS btree_gist;--> statement-breakpoint
DROP INDEX "catalogue_geog_gist";--> statement-breakpoint
DROP INDEX "catalogue_operations_gin";--> statement-breakpoint
CREATE INDEX "catalogue_business_geog_gist" ON "catalogue_entries" USING gist ("business_id","geog");--> statement-breakpoint
CREATE INDEX "catalogue_business_idx" ON "catalogue_entries" USING btree ("business_id");