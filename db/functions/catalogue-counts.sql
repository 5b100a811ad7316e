-- catalogue_counts: per business, its catalogue rows, those of each operation, and a
-- generation (a fresh value of catalogue_generation_seq in every statement that inserts, changes
-- or deletes a row of the business, a cascade included). The list reads its totals from here, and
-- the API keys its page cache by the generation (shared/listings/catalogue-cache.ts): any change,
-- by any writer, makes the cached pages of that business unreachable.

-- Repeatable: the current definition of every function and trigger below, applied by the
-- migrator (db/migrate.ts) after the migrations whenever this file's checksum changes, in one
-- transaction. CREATE OR REPLACE keeps every object's identity (no table lock, no gap); a
-- change of a function's arguments or result, or a removal, needs a migration that drops the
-- old one first. test/db/catalogue-functions.test.ts checks the database holds exactly these.

-- Statement-level triggers keep catalogue_counts in step with catalogue_entries in the same
-- transaction (one upsert per business per statement, not per row). Deletes only update: a
-- business being deleted cascades into both tables and must not be re-inserted here.
CREATE OR REPLACE FUNCTION catalogue_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_counts (business_id, entries, venta, alquiler, traspaso, generation)
  SELECT business_id, count(*), count(*) FILTER (WHERE operations @> '{venta}'), count(*) FILTER (WHERE operations @> '{alquiler}'), count(*) FILTER (WHERE operations @> '{traspaso}'),
    nextval('catalogue_generation_seq')
  FROM new_rows GROUP BY business_id ORDER BY business_id
  ON CONFLICT (business_id) DO UPDATE SET entries = catalogue_counts.entries + excluded.entries, venta = catalogue_counts.venta + excluded.venta,
    alquiler = catalogue_counts.alquiler + excluded.alquiler, traspaso = catalogue_counts.traspaso + excluded.traspaso, generation = excluded.generation;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalogue_counts c SET entries = c.entries - d.n, venta = c.venta - d.venta, alquiler = c.alquiler - d.alquiler, traspaso = c.traspaso - d.traspaso,
    generation = nextval('catalogue_generation_seq')
  FROM (SELECT business_id, count(*) AS n, count(*) FILTER (WHERE operations @> '{venta}') AS venta, count(*) FILTER (WHERE operations @> '{alquiler}') AS alquiler,
          count(*) FILTER (WHERE operations @> '{traspaso}') AS traspaso
        FROM old_rows GROUP BY business_id) d
  WHERE c.business_id = d.business_id;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Every business with a row in the statement gets a new generation; its totals move when a row
  -- changes business or operations.
  INSERT INTO catalogue_counts (business_id, entries, venta, alquiler, traspaso, generation)
  SELECT business_id, sum(n), sum(venta), sum(alquiler), sum(traspaso), nextval('catalogue_generation_seq') FROM (
    SELECT business_id, 1 AS n, (operations @> '{venta}')::int AS venta, (operations @> '{alquiler}')::int AS alquiler, (operations @> '{traspaso}')::int AS traspaso FROM new_rows
    UNION ALL SELECT business_id, -1, -(operations @> '{venta}')::int, -(operations @> '{alquiler}')::int, -(operations @> '{traspaso}')::int FROM old_rows
  ) x GROUP BY business_id ORDER BY business_id
  ON CONFLICT (business_id) DO UPDATE SET entries = catalogue_counts.entries + excluded.entries, venta = catalogue_counts.venta + excluded.venta,
    alquiler = catalogue_counts.alquiler + excluded.alquiler, traspaso = catalogue_counts.traspaso + excluded.traspaso, generation = excluded.generation;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_counts_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM catalogue_counts;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER catalogue_counts_insert AFTER INSERT ON catalogue_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_counts_after_insert();
CREATE OR REPLACE TRIGGER catalogue_counts_delete AFTER DELETE ON catalogue_entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_counts_after_delete();
CREATE OR REPLACE TRIGGER catalogue_counts_update AFTER UPDATE ON catalogue_entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_counts_after_update();
CREATE OR REPLACE TRIGGER catalogue_counts_truncate AFTER TRUNCATE ON catalogue_entries FOR EACH STATEMENT EXECUTE FUNCTION catalogue_counts_after_truncate();
