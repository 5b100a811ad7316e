-- The page walk of catalogue_box_page (0023) read every entry of the business from the GiST and
-- sorted them, instead of walking catalogue_business_updated_idx until the page was full, for two
-- reasons, both from the planner's estimate of the walk's point tests (pt[0] and pt[1] in ranges):
-- - it had no statistics on pt[0] and pt[1], so it took any two ranges to keep 0.005² of the
--   rows: ~2 of a business's 100,000 listings, few enough to sort, and too few to expect the walk
--   to stop early. Statistics on both now: a city rectangle is estimated at 262 of the business's
--   rows (4,207 in fact), and walked;
-- - PL/pgSQL switches a statement to a generic plan after five calls, and a generic plan knows no
--   rectangle, so it is back to 0.005². The walk is now EXECUTEd, planned with each call's values.
-- 1M listings, a city rectangle of ~4,500 of the biggest business's 100,782: the list statement
-- took 38–72 ms from the sixth call on a connection (7.6–8.3 ms for the first five); now ~8 ms on
-- every call. ANALYZE here, since autovacuum analyzes a table only after enough of it changed.
CREATE STATISTICS IF NOT EXISTS catalogue_entries_pt_stats ON (pt[0]), (pt[1]) FROM catalogue_entries;
--> statement-breakpoint
ANALYZE catalogue_entries;
--> statement-breakpoint
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
    -- full. EXECUTE: planned on every call with this call's rectangle (see the top of 0025).
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
