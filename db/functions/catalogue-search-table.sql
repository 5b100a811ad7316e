-- catalogue_search: a narrow copy of each catalogue row's filter columns and search vector,
-- hash-partitioned by business (migration 0032), which a search reads instead of
-- catalogue_entries (db/queries/catalogue/search.ts; docs/properties.md "Search"). Statement-level
-- triggers keep it in the same transaction as the rows: one statement per change, not one per row.

-- Repeatable: the current definition of every function and trigger below, applied by the
-- migrator (db/migrate.ts) after the migrations whenever this file's checksum changes, in one
-- transaction. CREATE OR REPLACE keeps every object's identity (no table lock, no gap); a
-- change of a function's arguments or result, or a removal, needs a migration that drops the
-- old one first. test/db/catalogue-functions.test.ts checks the database holds exactly these.

-- An update replaces the copy (delete, then insert): a row that changes business moves partition.
-- The delete is planned on each call (EXECUTE) with old_rows' real size, and only when it holds
-- rows. A statement trigger fires for every statement, empty ones included: deleting a business
-- of 20,000 listings cascades one empty DELETE per property after the one that takes them all.
-- A kept plan, made after five small statements, took old_rows for one row and probed all 32
-- partitions for each of the 20,000 (a sequential scan where a partition's statistics were
-- stale): 9.5 s, where a plan made for 20,000 rows hash-joins them in ~40 ms.
CREATE OR REPLACE FUNCTION catalogue_search_after_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- old_rows and new_rows exist only for the operations that have them; PL/pgSQL plans a
  -- statement when it first runs, so each operation runs only the statements of its own.
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    IF EXISTS (SELECT 1 FROM old_rows) THEN
      EXECUTE 'DELETE FROM catalogue_search s USING old_rows o WHERE s.business_id = o.business_id AND s.property_id = o.property_id';
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO catalogue_search (business_id, property_id, updated_at, status, operations, type, subtype_key, city_lc,
      price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, tsv)
    SELECT business_id, property_id, updated_at, status, operations, type, subtype_key, city_lc,
      price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, tsv FROM new_rows;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_search_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE catalogue_search;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER catalogue_search_insert AFTER INSERT ON catalogue_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_after_change();
CREATE OR REPLACE TRIGGER catalogue_search_delete AFTER DELETE ON catalogue_entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_after_change();
CREATE OR REPLACE TRIGGER catalogue_search_update AFTER UPDATE ON catalogue_entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_after_change();
CREATE OR REPLACE TRIGGER catalogue_search_truncate AFTER TRUNCATE ON catalogue_entries FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_after_truncate();
