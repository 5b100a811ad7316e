-- A narrow copy of what a search reads of each published listing (its filter columns and its
-- vector, no document, no point), hash-partitioned by business: a business's rows share a
-- partition of ~1/32 of the catalogue, so the candidates of a search stay in a few MB that
-- shared buffers hold, where catalogue_entries spreads them over a table of ~1.2 KB rows (1M
-- listings: 1.2 GB, one listing of the business per heap block). Kept by statement-level
-- triggers of catalogue_entries (db/functions/catalogue-search-table.sql) in the same
-- transaction; no foreign key: a business's or a property's deletion cascades into
-- catalogue_entries, whose trigger deletes the copy.
CREATE TABLE "catalogue_search" (
	"business_id" integer NOT NULL,
	"property_id" integer NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"status" text NOT NULL,
	"operations" text[] NOT NULL,
	"type" text NOT NULL,
	"subtype_key" text,
	"city_lc" text,
	"price_sale" double precision,
	"price_rent" double precision,
	"price_transfer" double precision,
	"bedrooms" integer NOT NULL,
	"is_featured" boolean NOT NULL,
	"rental_kind" text,
	"tsv" tsvector,
	CONSTRAINT "catalogue_search_pkey" PRIMARY KEY ("business_id", "property_id")
) PARTITION BY HASH ("business_id");--> statement-breakpoint
DO $$ BEGIN
  FOR i IN 0..31 LOOP
    EXECUTE format('CREATE TABLE catalogue_search_%s PARTITION OF catalogue_search FOR VALUES WITH (MODULUS 32, REMAINDER %s)', lpad(i::text, 2, '0'), i);
  END LOOP;
END $$;--> statement-breakpoint
-- The first definitions of the triggers that keep it (the current ones: db/functions), created
-- before the copy in this transaction: CREATE TRIGGER locks out writers of catalogue_entries until
-- it commits, so no write falls between the copy and the first trigger.
CREATE FUNCTION catalogue_search_after_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- old_rows and new_rows exist only for the operations that have them; PL/pgSQL plans a
  -- statement when it first runs, so each operation runs only the statements of its own.
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM catalogue_search s USING old_rows o WHERE s.business_id = o.business_id AND s.property_id = o.property_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO catalogue_search (business_id, property_id, updated_at, status, operations, type, subtype_key, city_lc,
      price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, tsv)
    SELECT business_id, property_id, updated_at, status, operations, type, subtype_key, city_lc,
      price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, tsv FROM new_rows;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION catalogue_search_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE catalogue_search;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER catalogue_search_insert AFTER INSERT ON catalogue_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_after_change();--> statement-breakpoint
CREATE TRIGGER catalogue_search_delete AFTER DELETE ON catalogue_entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_after_change();--> statement-breakpoint
CREATE TRIGGER catalogue_search_update AFTER UPDATE ON catalogue_entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_after_change();--> statement-breakpoint
CREATE TRIGGER catalogue_search_truncate AFTER TRUNCATE ON catalogue_entries FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_after_truncate();--> statement-breakpoint
INSERT INTO "catalogue_search" SELECT business_id, property_id, updated_at, status, operations, type, subtype_key, city_lc,
  price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, tsv FROM "catalogue_entries";--> statement-breakpoint
-- The search's two ways to its candidates (db/queries/catalogue/search.ts): the business's
-- listings newest first, each tested against the query (a common word), or the word's posting
-- list within the business (a rare one).
CREATE INDEX "catalogue_search_updated_idx" ON "catalogue_search" ("business_id", "updated_at" DESC NULLS LAST, "property_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "catalogue_search_tsv_gin" ON "catalogue_search" USING gin ("business_id", "tsv");
