-- The public document is read only as text (the list's string_agg, GET /properties/{id}, the
-- feed), and as jsonb PostgreSQL rendered it back to text on every read: 0.3 ms of a page of 100
-- (pgbench, c=16, the no-filter page of 100 on 20,000 listings: 2,380 → 3,520 pages/s).
-- As `json` it is stored as the text it is served as. Every writer stores jsonb's own rendering
-- (upsertCatalogueEntries casts from jsonb), so the bytes served do not change and comparing two
-- documents' text is comparing the documents. The search vector parses it once per write.
-- The ALTER rewrites the table under an exclusive lock: ~0.5 s per 20,000 rows (docs/operations.md).
DROP TRIGGER catalogue_entries_search_vector ON catalogue_entries;--> statement-breakpoint
ALTER TABLE "catalogue_entries" ALTER COLUMN "doc" SET DATA TYPE json USING "doc"::json;--> statement-breakpoint
CREATE OR REPLACE FUNCTION catalogue_entries_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.doc::text IS DISTINCT FROM OLD.doc::text OR NEW.tsv IS NULL THEN
    NEW.tsv := catalogue_search_vector(NEW.doc::jsonb);
  END IF;
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER catalogue_entries_search_vector BEFORE INSERT OR UPDATE OF doc ON catalogue_entries FOR EACH ROW EXECUTE FUNCTION catalogue_entries_search_vector();
