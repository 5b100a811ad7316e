-- Repeatable: the current definition of every function and trigger below, applied by the
-- migrator (db/migrate.ts) after the migrations whenever this file's checksum changes, in one
-- transaction. CREATE OR REPLACE keeps every object's identity (no table lock, no gap); a
-- change of a function's arguments or result, or a removal, needs a migration that drops the
-- old one first. test/db/catalogue-functions.test.ts checks the database holds exactly these.

-- Listings per business, operation and price bucket, kept by statement-level triggers of
-- catalogue_entries in the same statement (like catalogue_counts). The total of an operation's
-- price range is then the sum of the buckets wholly inside the range plus the listings of the
-- partial buckets at its two edges, counted from the price index: a range of 20,000 listings of a
-- 100,000-listing business read 20,000 index entries per request, ~3.4 ms.
-- Widths: a tenth of a typical price step of each market, so an edge holds ~1% of the listings.
-- They are defined here only: the list (db/queries/catalogue/counts.ts) leaves every decision
-- that depends on them to catalogue_price_range_count.
CREATE OR REPLACE FUNCTION catalogue_price_width(op text) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE op WHEN 'venta' THEN 10000 WHEN 'alquiler' THEN 50 WHEN 'traspaso' THEN 5000 END;

-- The price column of an operation's listings.
CREATE OR REPLACE FUNCTION catalogue_price_column(op text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE op WHEN 'venta' THEN 'price_sale' WHEN 'alquiler' THEN 'price_rent' WHEN 'traspaso' THEN 'price_transfer' END;

-- Clamped so that no price can overflow bigint (prices have no upper bound); the two extreme
-- buckets are never summed as whole buckets of a range with that bound. A price under the bucket
-- width (a denormal such as 1e-320 included) is in bucket 0 (or -1 below zero) without dividing:
-- the division raised "value out of range: underflow" and failed the write (found by the fuzz test).
CREATE OR REPLACE FUNCTION catalogue_price_bucket(price float8, width float8) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN abs(price) < width THEN (CASE WHEN price < 0 THEN -1 ELSE 0 END)::bigint
  ELSE least(greatest(floor(price / width), (-1e15)::float8), (1e15)::float8)::bigint END;
CREATE OR REPLACE FUNCTION catalogue_price_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_price_counts (business_id, op, bucket, n)
  SELECT r.business_id, v.op, catalogue_price_bucket(v.price, catalogue_price_width(v.op)), count(*)
  FROM new_rows r CROSS JOIN LATERAL (VALUES ('venta', r.price_sale), ('alquiler', r.price_rent), ('traspaso', r.price_transfer)) v(op, price)
  WHERE r.operations @> ARRAY[v.op] AND v.price IS NOT NULL
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (business_id, op, bucket) DO UPDATE SET n = catalogue_price_counts.n + excluded.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_price_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalogue_price_counts c SET n = c.n - d.n
  FROM (SELECT r.business_id, v.op, catalogue_price_bucket(v.price, catalogue_price_width(v.op)) AS bucket, count(*) AS n
        FROM old_rows r CROSS JOIN LATERAL (VALUES ('venta', r.price_sale), ('alquiler', r.price_rent), ('traspaso', r.price_transfer)) v(op, price)
        WHERE r.operations @> ARRAY[v.op] AND v.price IS NOT NULL
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) d
  WHERE c.business_id = d.business_id AND c.op = d.op AND c.bucket = d.bucket;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_price_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_price_counts (business_id, op, bucket, n)
  SELECT business_id, op, bucket, sum(n) FROM (
    SELECT r.business_id, v.op, catalogue_price_bucket(v.price, catalogue_price_width(v.op)) AS bucket, 1 AS n
    FROM new_rows r CROSS JOIN LATERAL (VALUES ('venta', r.price_sale), ('alquiler', r.price_rent), ('traspaso', r.price_transfer)) v(op, price)
    WHERE r.operations @> ARRAY[v.op] AND v.price IS NOT NULL
    UNION ALL
    SELECT r.business_id, v.op, catalogue_price_bucket(v.price, catalogue_price_width(v.op)), -1
    FROM old_rows r CROSS JOIN LATERAL (VALUES ('venta', r.price_sale), ('alquiler', r.price_rent), ('traspaso', r.price_transfer)) v(op, price)
    WHERE r.operations @> ARRAY[v.op] AND v.price IS NOT NULL
  ) x GROUP BY 1, 2, 3 HAVING sum(n) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (business_id, op, bucket) DO UPDATE SET n = catalogue_price_counts.n + excluded.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION catalogue_price_counts_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM catalogue_price_counts;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER catalogue_price_counts_insert AFTER INSERT ON catalogue_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_price_counts_after_insert();
CREATE OR REPLACE TRIGGER catalogue_price_counts_delete AFTER DELETE ON catalogue_entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_price_counts_after_delete();
CREATE OR REPLACE TRIGGER catalogue_price_counts_update AFTER UPDATE ON catalogue_entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_price_counts_after_update();
CREATE OR REPLACE TRIGGER catalogue_price_counts_truncate AFTER TRUNCATE ON catalogue_entries FOR EACH STATEMENT EXECUTE FUNCTION catalogue_price_counts_after_truncate();

-- The exact count of one operation's price range: the whole buckets from catalogue_price_counts
-- plus the listings of the two edge buckets, from the price index. PL/pgSQL, so each query is
-- planned once per server connection and kept: as sub-selects of the list statement they were
-- planned on every request (1.2 ms of a 1.6 ms statement; pgbench, 20k listings, c=16: 799 ->
-- 2,562 statements/s). The plans depend on no session setting, so a transaction-mode pooler
-- changes nothing. NULL is no bound. One bucket per edge is exact:
-- catalogue_price_bucket is non-decreasing in the price (a correctly rounded division, floor and
-- clamp are each non-decreasing), so a price in a bucket above the minimum's is above the minimum
-- and one in a bucket below the maximum's is below the maximum: the whole buckets are
-- bucket(min) + 1 .. bucket(max) - 1, and each edge is the one bucket of its bound.
-- The index ranges only narrow the scan (the bucket test decides), so they must hold every row of
-- the edge bucket: with bounds of at most 1e15 (larger ones are counted directly, above) k·width is an exact integer below 2^53, a price whose bucket is below
-- k1 is below k1·width, and one whose bucket is above k2 is above (k2 + 1)·width - 1 (the quotient
-- can round up to k2 + 1 only within a relative 2^-53 of it, under 1 here). The margins of 1 keep
-- that true with room to spare.
CREATE OR REPLACE FUNCTION catalogue_price_range_count(p_business integer, p_op text, p_min float8, p_max float8) RETURNS bigint
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  w float8 := catalogue_price_width(p_op);
  -- The first and last whole buckets: without a bound, the extreme bucket on that side is whole.
  k1 bigint := CASE WHEN p_min IS NULL THEN (-1e15)::bigint ELSE catalogue_price_bucket(p_min, w) + 1 END;
  k2 bigint := CASE WHEN p_max IS NULL THEN (1e15)::bigint ELSE catalogue_price_bucket(p_max, w) - 1 END;
  total bigint;
BEGIN
  IF w IS NULL THEN
    RAISE EXCEPTION 'catalogue_price_range_count: unknown operation %', p_op;
  END IF;
  -- A range under eight buckets wide is counted directly from the price index (its edges would
  -- read about as many entries), and so is one with a bound past ±1e15, where bucket · width is
  -- no longer an exact integer (the edges' index ranges rely on it). Planned with this call's values.
  IF (p_min IS NOT NULL AND p_max IS NOT NULL AND (p_max - p_min) / w < 8) OR abs(p_min) > 1e15 OR abs(p_max) > 1e15 THEN
    EXECUTE format('SELECT count(*) FROM catalogue_entries WHERE business_id = $1 AND operations @> ARRAY[%L] AND %I >= $2 AND %I <= $3',
        p_op, catalogue_price_column(p_op), catalogue_price_column(p_op))
      INTO total USING p_business, coalesce(p_min, '-Infinity'::float8), coalesce(p_max, 'NaN'::float8);
    RETURN total;
  END IF;
  SELECT coalesce(sum(n), 0) INTO total FROM catalogue_price_counts WHERE business_id = p_business AND op = p_op AND bucket BETWEEN k1 AND k2;
  IF p_op = 'venta' THEN
    IF p_min IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{venta}'::text[]
        AND price_sale >= p_min AND price_sale < k1 * w + 1 AND catalogue_price_bucket(price_sale, w) < k1;
    END IF;
    IF p_max IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{venta}'::text[]
        AND price_sale > (k2 + 1) * w - 1 AND price_sale <= p_max AND catalogue_price_bucket(price_sale, w) > k2;
    END IF;
  ELSIF p_op = 'alquiler' THEN
    IF p_min IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{alquiler}'::text[]
        AND price_rent >= p_min AND price_rent < k1 * w + 1 AND catalogue_price_bucket(price_rent, w) < k1;
    END IF;
    IF p_max IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{alquiler}'::text[]
        AND price_rent > (k2 + 1) * w - 1 AND price_rent <= p_max AND catalogue_price_bucket(price_rent, w) > k2;
    END IF;
  ELSIF p_op = 'traspaso' THEN
    IF p_min IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{traspaso}'::text[]
        AND price_transfer >= p_min AND price_transfer < k1 * w + 1 AND catalogue_price_bucket(price_transfer, w) < k1;
    END IF;
    IF p_max IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{traspaso}'::text[]
        AND price_transfer > (k2 + 1) * w - 1 AND price_transfer <= p_max AND catalogue_price_bucket(price_transfer, w) > k2;
    END IF;
  END IF;
  RETURN total;
END $$;

-- The page of one operation's price range, nothing else filtered, in the default order, with its
-- total (catalogue_price_range_count). Two ways to the page, by index entries read:
-- - the operation's price index, every listing of the range then the top kept by updated_at:
--   about total entries and a sort (what the planner picks for the list statement);

-- - catalogue_business_updated_idx, which INCLUDEs the operations and prices, walked until the
--   page is full: about (offset + limit) · entries / total, `entries` being the business's.
-- A rental range holding 5,905 of a business's 100,053 listings: 5,905 entries sorted against
-- ~1,700 walked. The walk's price tests add 0 so that no price index can answer them (the walk is
-- the point); a bound left out is -Infinity or NaN, the ends of float8's order, so that
-- `price >= lo AND price <= hi` is exactly the one-sided test.
CREATE OR REPLACE FUNCTION catalogue_price_range_page(p_business integer, p_op text, p_min float8, p_max float8, p_limit integer, p_offset integer, OUT total bigint, OUT ids integer[])
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  lo float8 := coalesce(p_min, '-Infinity'::float8);
  hi float8 := coalesce(p_max, 'NaN'::float8);
  entries bigint;
  walk boolean;
BEGIN
  total := catalogue_price_range_count(p_business, p_op, p_min, p_max);
  IF total <= p_offset THEN
    ids := '{}';
    RETURN;
  END IF;
  SELECT coalesce((SELECT c.entries FROM catalogue_counts c WHERE c.business_id = p_business), 0) INTO entries;
  walk := (p_offset::float8 + p_limit) * entries < 1.2 * total::float8 * total::float8;
  IF p_op = 'venta' THEN
    IF walk THEN
      SELECT coalesce(array_agg(property_id ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, updated_at FROM catalogue_entries WHERE business_id = p_business AND 'venta' = ANY (operations)
          AND price_sale + 0 >= lo AND price_sale + 0 <= hi
        ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) page;
    ELSE
      SELECT coalesce(array_agg(property_id ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, updated_at FROM catalogue_entries WHERE business_id = p_business AND operations @> '{venta}'::text[]
          AND price_sale >= lo AND price_sale <= hi
        ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) page;
    END IF;
  ELSIF p_op = 'alquiler' THEN
    IF walk THEN
      SELECT coalesce(array_agg(property_id ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, updated_at FROM catalogue_entries WHERE business_id = p_business AND 'alquiler' = ANY (operations)
          AND price_rent + 0 >= lo AND price_rent + 0 <= hi
        ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) page;
    ELSE
      SELECT coalesce(array_agg(property_id ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, updated_at FROM catalogue_entries WHERE business_id = p_business AND operations @> '{alquiler}'::text[]
          AND price_rent >= lo AND price_rent <= hi
        ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) page;
    END IF;
  ELSIF p_op = 'traspaso' THEN
    IF walk THEN
      SELECT coalesce(array_agg(property_id ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, updated_at FROM catalogue_entries WHERE business_id = p_business AND 'traspaso' = ANY (operations)
          AND price_transfer + 0 >= lo AND price_transfer + 0 <= hi
        ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) page;
    ELSE
      SELECT coalesce(array_agg(property_id ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, updated_at FROM catalogue_entries WHERE business_id = p_business AND operations @> '{traspaso}'::text[]
          AND price_transfer >= lo AND price_transfer <= hi
        ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) page;
    END IF;
  ELSE
    RAISE EXCEPTION 'catalogue_price_range_page: unknown operation %', p_op;
  END IF;
END $$;
