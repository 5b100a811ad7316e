-- Repeatable: the current definition of every function and trigger below, applied by the
-- migrator (db/migrate.ts) after the migrations whenever this file's checksum changes, in one
-- transaction. CREATE OR REPLACE keeps every object's identity (no table lock, no gap); a
-- change of a function's arguments or result, or a removal, needs a migration that drops the
-- old one first. test/db/catalogue-functions.test.ts checks the database holds exactly these.

-- Published points per business and map cell, kept by statement-level triggers of
-- catalogue_entries in the same statement (like catalogue_price_counts). A map
-- rectangle of a city holds thousands of a big business's listings: counting them read each one's
-- index entry (1M listings, 4,657 matches: 1,392 counts/s at c=16), summing the ~180 cells wholly
-- inside it and counting the points of its four edge strips reads ~15% of them (3,635/s).
-- A cell is 1/64 degree on each side: x · 64 is exact in float8 (a power of two), so a point's cell
-- and a cell's edges (k / 64) are exact and the strips and the cells never overlap or miss a point.
CREATE OR REPLACE FUNCTION catalogue_geo_cell(coordinate float8) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN floor(coordinate * 64)::integer;

CREATE OR REPLACE FUNCTION catalogue_geo_cells_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_geo_cells (business_id, cy, cx, n)
  SELECT r.business_id, catalogue_geo_cell(r.pt[1]), catalogue_geo_cell(r.pt[0]), count(*)
  FROM new_rows r WHERE r.pt IS NOT NULL
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (business_id, cy, cx) DO UPDATE SET n = catalogue_geo_cells.n + excluded.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_geo_cells_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalogue_geo_cells c SET n = c.n - d.n
  FROM (SELECT r.business_id, catalogue_geo_cell(r.pt[1]) AS cy, catalogue_geo_cell(r.pt[0]) AS cx, count(*) AS n
        FROM old_rows r WHERE r.pt IS NOT NULL
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) d
  WHERE c.business_id = d.business_id AND c.cy = d.cy AND c.cx = d.cx;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_geo_cells_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_geo_cells (business_id, cy, cx, n)
  SELECT business_id, cy, cx, sum(n) FROM (
    SELECT r.business_id, catalogue_geo_cell(r.pt[1]) AS cy, catalogue_geo_cell(r.pt[0]) AS cx, 1 AS n FROM new_rows r WHERE r.pt IS NOT NULL
    UNION ALL
    SELECT r.business_id, catalogue_geo_cell(r.pt[1]), catalogue_geo_cell(r.pt[0]), -1 FROM old_rows r WHERE r.pt IS NOT NULL
  ) x GROUP BY 1, 2, 3 HAVING sum(n) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (business_id, cy, cx) DO UPDATE SET n = catalogue_geo_cells.n + excluded.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_geo_cells_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM catalogue_geo_cells;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER catalogue_geo_cells_insert AFTER INSERT ON catalogue_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_geo_cells_after_insert();
CREATE OR REPLACE TRIGGER catalogue_geo_cells_delete AFTER DELETE ON catalogue_entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_geo_cells_after_delete();
CREATE OR REPLACE TRIGGER catalogue_geo_cells_update AFTER UPDATE ON catalogue_entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_geo_cells_after_update();
CREATE OR REPLACE TRIGGER catalogue_geo_cells_truncate AFTER TRUNCATE ON catalogue_entries FOR EACH STATEMENT EXECUTE FUNCTION catalogue_geo_cells_after_truncate();

-- The total and the page of a rectangle [p_west, p_east] × [p_south, p_north] (edges included, as
-- the list's box test) of one business, nothing else filtered, in the default order. PL/pgSQL so
-- the server plans each statement once per connection.
-- Two ways, by cost in index entries read (an entry of the GiST costs ~1.5× one of the B-tree):
-- - read every match from the GiST once, counting them and keeping the page (the list statement's
--   materialized CTE): 1.5 · total;

-- - walk catalogue_business_updated_idx, which carries the point, until the page is full, about
--   (offset + limit) · entries / total entries, and count from the cells: the cells x1..x2 × y1..y2
--   lie wholly inside (x1 / 64 > p_west, (x2 + 1) / 64 <= p_east, and so on), and a point of the
--   rectangle outside them is in exactly one of four strips: left of x1 / 64, right of
--   (x2 + 1) / 64, or between them below y1 / 64 or above (y2 + 1) / 64.
-- The cells wholly inside (a lower bound of the total) decide. A city of 4,657 of a business's
-- 100,053 listings walks ~2,200 entries and counts ~700 instead of reading 4,657 and sorting them
-- (1M listings, c=16: 865 → ~1,900 statements/s); 942 of 20,000 are read from the GiST.
-- The walk is EXECUTEd, planned with each call's rectangle: PL/pgSQL adopts a generic plan after
-- five calls, which knows no rectangle and takes the two coordinate ranges to keep 0.005² of the
-- rows (~2 of 100,000), too few to expect the walk to stop early; it then read every entry of the
-- business from the GiST and sorted them (38–72 ms instead of ~8 ms at 1M listings). The
-- statistics on pt[0] and pt[1] (catalogue_entries_pt_stats) give the planner the real share.
CREATE OR REPLACE FUNCTION catalogue_box_page(p_business integer, p_west float8, p_south float8, p_east float8, p_north float8, p_limit integer, p_offset integer, OUT total bigint, OUT ids integer[])
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  x1 integer := catalogue_geo_cell(p_west) + 1;
  x2 integer := catalogue_geo_cell(p_east) - 1;
  y1 integer := catalogue_geo_cell(p_south) + 1;
  y2 integer := catalogue_geo_cell(p_north) - 1;
  inside bigint := 0;
  entries bigint;
BEGIN
  IF x1 <= x2 AND y1 <= y2 THEN
    SELECT coalesce(sum(n), 0) INTO inside FROM catalogue_geo_cells WHERE business_id = p_business AND cy BETWEEN y1 AND y2 AND cx BETWEEN x1 AND x2;
  END IF;
  IF inside > 0 THEN
    SELECT coalesce((SELECT c.entries FROM catalogue_counts c WHERE c.business_id = p_business), 0) INTO entries;
  END IF;
  IF inside > 0 AND (p_offset::float8 + p_limit) * entries < 1.5 * inside::float8 * inside::float8 THEN
    total := inside;
    SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business
      AND pt <@ box(point(p_west, p_south), point(x1::float8 / 64, p_north)) AND pt[0] >= p_west AND pt[0] < x1::float8 / 64 AND pt[1] BETWEEN p_south AND p_north;
    SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business
      AND pt <@ box(point((x2 + 1)::float8 / 64, p_south), point(p_east, p_north)) AND pt[0] >= (x2 + 1)::float8 / 64 AND pt[0] <= p_east AND pt[1] BETWEEN p_south AND p_north;
    SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business
      AND pt <@ box(point(x1::float8 / 64, p_south), point((x2 + 1)::float8 / 64, y1::float8 / 64))
      AND pt[0] >= x1::float8 / 64 AND pt[0] < (x2 + 1)::float8 / 64 AND pt[1] >= p_south AND pt[1] < y1::float8 / 64;
    SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business
      AND pt <@ box(point(x1::float8 / 64, (y2 + 1)::float8 / 64), point((x2 + 1)::float8 / 64, p_north))
      AND pt[0] >= x1::float8 / 64 AND pt[0] < (x2 + 1)::float8 / 64 AND pt[1] >= (y2 + 1)::float8 / 64 AND pt[1] <= p_north;
    -- No `<@` here: the only index that answers this order is the B-tree, walked until the page is
    -- full. EXECUTE: planned on every call with this call's rectangle (see above).
    EXECUTE 'SELECT coalesce(array_agg(property_id ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST), ''{}'') FROM (
      SELECT property_id, updated_at FROM catalogue_entries WHERE business_id = $1
        AND pt[0] BETWEEN $2 AND $3 AND pt[1] BETWEEN $4 AND $5
      ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT $6 OFFSET $7) page'
      INTO ids USING p_business, p_west, p_east, p_south, p_north, p_limit, p_offset;
  ELSE
    WITH matches AS MATERIALIZED (
      SELECT property_id, updated_at FROM catalogue_entries WHERE business_id = p_business
        AND pt <@ box(point(p_west, p_south), point(p_east, p_north)) AND pt[0] BETWEEN p_west AND p_east AND pt[1] BETWEEN p_south AND p_north)
    SELECT (SELECT count(*) FROM matches),
      (SELECT coalesce(array_agg(property_id ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST), '{}') FROM (
        SELECT property_id, updated_at FROM matches ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) page)
    INTO total, ids;
  END IF;
END $$;
