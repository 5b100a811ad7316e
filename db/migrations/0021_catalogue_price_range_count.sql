-- The exact count of one operation's price range (db/queries/catalogue.ts priceRangeCount): the
-- whole buckets from catalogue_price_counts (0019) plus the listings of the two edge buckets. As
-- three sub-selects of the list statement it was planned on every request, and planning (14
-- indexes on catalogue_entries, three references to it) was 1.2 ms of a 1.6 ms statement. Here
-- each query is PL/pgSQL's, planned once per server connection and kept: pgbench, 20k listings,
-- c=16, the operation+price list statement 799 -> 2,562 statements/s. The plans depend on no
-- session setting, so a transaction-mode pooler changes nothing. Bounds are those the caller
-- allows (|bound| <= 1e18, at least 8 buckets between them); NULL is no bound. The widths are
-- PRICE_BUCKETS' and the triggers' of 0019.
CREATE OR REPLACE FUNCTION catalogue_price_range_count(p_business integer, p_op text, p_min float8, p_max float8) RETURNS bigint
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  w float8 := CASE p_op WHEN 'venta' THEN 10000 WHEN 'alquiler' THEN 50 WHEN 'traspaso' THEN 5000 END;
  -- The first and last whole buckets: without a bound, the extreme bucket on that side is whole.
  k1 bigint := CASE WHEN p_min IS NULL THEN (-1e15)::bigint ELSE catalogue_price_bucket(p_min, w) + 2 END;
  k2 bigint := CASE WHEN p_max IS NULL THEN (1e15)::bigint ELSE least(catalogue_price_bucket(p_max, w) - 1, 1e15 - 1)::bigint END;
  total bigint;
BEGIN
  IF w IS NULL THEN
    RAISE EXCEPTION 'catalogue_price_range_count: unknown operation %', p_op;
  END IF;
  SELECT coalesce(sum(n), 0) INTO total FROM catalogue_price_counts WHERE business_id = p_business AND op = p_op AND bucket BETWEEN k1 AND k2;
  IF p_op = 'venta' THEN
    IF p_min IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{venta}'::text[]
        AND price_sale >= p_min AND price_sale < k1 * w AND catalogue_price_bucket(price_sale, w) < k1;
    END IF;
    IF p_max IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{venta}'::text[]
        AND price_sale >= k2 * w AND price_sale <= p_max AND catalogue_price_bucket(price_sale, w) > k2;
    END IF;
  ELSIF p_op = 'alquiler' THEN
    IF p_min IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{alquiler}'::text[]
        AND price_rent >= p_min AND price_rent < k1 * w AND catalogue_price_bucket(price_rent, w) < k1;
    END IF;
    IF p_max IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{alquiler}'::text[]
        AND price_rent >= k2 * w AND price_rent <= p_max AND catalogue_price_bucket(price_rent, w) > k2;
    END IF;
  ELSIF p_op = 'traspaso' THEN
    IF p_min IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{traspaso}'::text[]
        AND price_transfer >= p_min AND price_transfer < k1 * w AND catalogue_price_bucket(price_transfer, w) < k1;
    END IF;
    IF p_max IS NOT NULL THEN
      SELECT total + count(*) INTO total FROM catalogue_entries WHERE business_id = p_business AND operations @> '{traspaso}'::text[]
        AND price_transfer >= k2 * w AND price_transfer <= p_max AND catalogue_price_bucket(price_transfer, w) > k2;
    END IF;
  END IF;
  RETURN total;
END $$;
