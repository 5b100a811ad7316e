CREATE TABLE "catalogue_counts" (
	"business_id" integer PRIMARY KEY NOT NULL,
	"entries" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "catalogue_counts" ADD CONSTRAINT "catalogue_counts_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Statement-level triggers keep catalogue_counts in step with catalogue_entries in the same
-- transaction (one upsert per business per statement, not per row). Deletes only update: a
-- business being deleted cascades into both tables and must not be re-inserted here.
CREATE FUNCTION catalogue_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_counts (business_id, entries)
  SELECT business_id, count(*) FROM new_rows GROUP BY business_id ORDER BY business_id
  ON CONFLICT (business_id) DO UPDATE SET entries = catalogue_counts.entries + excluded.entries;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION catalogue_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalogue_counts c SET entries = c.entries - d.n
  FROM (SELECT business_id, count(*) AS n FROM old_rows GROUP BY business_id) d
  WHERE c.business_id = d.business_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION catalogue_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Only a row moving to another business changes a count (an upsert of the same property does not).
  INSERT INTO catalogue_counts (business_id, entries)
  SELECT business_id, sum(n) FROM (
    SELECT business_id, count(*) AS n FROM new_rows GROUP BY business_id
    UNION ALL SELECT business_id, -count(*) FROM old_rows GROUP BY business_id
  ) x GROUP BY business_id HAVING sum(n) <> 0 ORDER BY business_id
  ON CONFLICT (business_id) DO UPDATE SET entries = catalogue_counts.entries + excluded.entries;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION catalogue_counts_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM catalogue_counts;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER catalogue_counts_insert AFTER INSERT ON catalogue_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_counts_after_insert();--> statement-breakpoint
CREATE TRIGGER catalogue_counts_delete AFTER DELETE ON catalogue_entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_counts_after_delete();--> statement-breakpoint
CREATE TRIGGER catalogue_counts_update AFTER UPDATE ON catalogue_entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_counts_after_update();--> statement-breakpoint
CREATE TRIGGER catalogue_counts_truncate AFTER TRUNCATE ON catalogue_entries FOR EACH STATEMENT EXECUTE FUNCTION catalogue_counts_after_truncate();--> statement-breakpoint
INSERT INTO catalogue_counts (business_id, entries)
SELECT business_id, count(*) FROM catalogue_entries GROUP BY business_id
ON CONFLICT (business_id) DO UPDATE SET entries = excluded.entries;
