-- The page of one operation's price range, nothing else filtered, in the default order, with its
-- total (catalogue_price_range_count, 0021/0022). Two ways to the page, by index entries read:
-- - the operation's price index, every listing of the range then the top kept by updated_at:
--   about total entries and a sort (what the planner picks for the list statement);
-- - catalogue_business_updated_idx, which INCLUDEs the operations and prices, walked until the
--   page is full: about (offset + limit) · entries / total, `entries` being the business's.
-- A rental range holding 5,905 of a business's 100,053 listings: 5,905 entries sorted against
-- ~1,700 walked. The walk's price tests add 0 so that no price index can answer them (the walk is
-- the point); a bound left out is -Infinity or NaN, the ends of float8's order, so that
-- `price >= lo AND price <= hi` is exactly the one-sided test.
CREATE FUNCTION catalogue_price_range_page(p_business integer, p_op text, p_min float8, p_max float8, p_limit integer, p_offset integer, OUT total bigint, OUT ids integer[])
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
