-- catalogue_price_range_count (0021) read two buckets of index entries at each edge of the range:
-- at 1M listings ~350 buffers, 1.6 ms of the 1.75 ms list statement. One bucket per edge is exact:
-- catalogue_price_bucket is non-decreasing in the price (a correctly rounded division, floor and
-- clamp are each non-decreasing), so a price in a bucket above the minimum's is above the minimum
-- and one in a bucket below the maximum's is below the maximum: the whole buckets are
-- bucket(min) + 1 .. bucket(max) - 1, and each edge is the one bucket of its bound.
-- The index ranges only narrow the scan (the bucket test decides), so they must hold every row of
-- the edge bucket: with bounds of at most 1e15 (db/queries/catalogue.ts priceRangeCount; larger
-- ones are counted directly) k·width is an exact integer below 2^53, a price whose bucket is below
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
