-- catalogue_counts.generation: a fresh value of catalogue_generation_seq in every statement that
-- inserts, changes or deletes a catalogue row of the business (a cascade from a deleted property
-- or business included), set by the statement-level triggers that already keep the totals. The
-- API keys its in-process cache of list pages by it (shared/listings/catalogue-cache.ts): any
-- change, by any writer, makes the cached pages of that business unreachable. A sequence, so a
-- value is never seen twice, even after a truncate deletes the rows of catalogue_counts.
CREATE SEQUENCE "public"."catalogue_generation_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
ALTER TABLE "catalogue_counts" ADD COLUMN "generation" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE OR REPLACE FUNCTION catalogue_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_counts (business_id, entries, venta, alquiler, traspaso, generation)
  SELECT business_id, count(*), count(*) FILTER (WHERE operations @> '{venta}'), count(*) FILTER (WHERE operations @> '{alquiler}'), count(*) FILTER (WHERE operations @> '{traspaso}'),
    nextval('catalogue_generation_seq')
  FROM new_rows GROUP BY business_id ORDER BY business_id
  ON CONFLICT (business_id) DO UPDATE SET entries = catalogue_counts.entries + excluded.entries, venta = catalogue_counts.venta + excluded.venta,
    alquiler = catalogue_counts.alquiler + excluded.alquiler, traspaso = catalogue_counts.traspaso + excluded.traspaso, generation = excluded.generation;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION catalogue_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalogue_counts c SET entries = c.entries - d.n, venta = c.venta - d.venta, alquiler = c.alquiler - d.alquiler, traspaso = c.traspaso - d.traspaso,
    generation = nextval('catalogue_generation_seq')
  FROM (SELECT business_id, count(*) AS n, count(*) FILTER (WHERE operations @> '{venta}') AS venta, count(*) FILTER (WHERE operations @> '{alquiler}') AS alquiler,
          count(*) FILTER (WHERE operations @> '{traspaso}') AS traspaso
        FROM old_rows GROUP BY business_id) d
  WHERE c.business_id = d.business_id;
  RETURN NULL;
END $$;--> statement-breakpoint
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
END $$;--> statement-breakpoint
UPDATE catalogue_counts SET generation = nextval('catalogue_generation_seq');
