-- The pages read straight from an index in the list's order, with nothing filtered but their
-- operation: the default order (no filter, `operation=venta`, any `offset`;
-- catalogue_recent_page) and a price sort (catalogue_price_sorted_page). Each returns the total
-- from catalogue_counts, the page's ids in order and, with p_docs, its documents joined by `,`
-- (the list statement's `data`; db/queries/catalogue/list.ts `orderedPageSql`), through the
-- two helpers below.

-- Repeatable: the current definition of every function below, applied by the migrator
-- (db/migrate.ts) after the migrations whenever this file's checksum changes, in one
-- transaction. CREATE OR REPLACE keeps every object's identity; a change of a function's
-- arguments or result, or a removal, needs a migration that drops the old one first.
-- test/db/catalogue-functions.test.ts checks the database holds exactly these.

-- PL/pgSQL, so each of their statements is parsed once per server connection and kept: the same
-- page as one statement with CTEs was parsed, analysed and planned on every request (20,000
-- listings, pgbench c=16, PostgreSQL's own CPU per page in three alternations: the default order
-- 1,438 / 1,589 / 1,944 → 858 / 1,267 / 1,301 µs, a price sort 2,074 / 1,858 / 1,833 → 1,536 /
-- 1,520 / 1,515 µs; docs/properties.md "What each mechanism buys"). Every plan here is the same
-- for any business, limit and offset (a walk of one index, the documents by primary key), so a
-- generic plan loses nothing. STABLE: every statement reads the caller's snapshot, so
-- the total, the ids and the documents agree with each other and with the statement around.
-- An operation is one of the fixed set, each with its own static query, so that the planner
-- matches the operation's partial index; any other value raises (catalogue_counted).

-- The total of a business's listings, or of one operation's (catalogue_counts, the counters
-- kept by its triggers); any other operation raises, so that no unknown name reads as "all".
CREATE OR REPLACE FUNCTION catalogue_counted(p_business integer, p_op text) RETURNS bigint
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  IF p_op IS NOT NULL AND p_op NOT IN ('venta', 'alquiler', 'traspaso') THEN
    RAISE EXCEPTION 'unknown operation %', p_op;
  END IF;
  RETURN coalesce((SELECT CASE p_op WHEN 'venta' THEN c.venta WHEN 'alquiler' THEN c.alquiler WHEN 'traspaso' THEN c.traspaso ELSE c.entries END
    FROM catalogue_counts c WHERE c.business_id = p_business), 0);
END $$;

-- The documents of a page's ids, in their order, joined by `,` (null for no ids).
CREATE OR REPLACE FUNCTION catalogue_page_docs(p_ids integer[]) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT string_agg(c.doc::text, ',' ORDER BY u.ord)
    FROM unnest(p_ids) WITH ORDINALITY AS u(property_id, ord) JOIN catalogue_entries c ON c.property_id = u.property_id);
END $$;

-- The default order: catalogue_search's recency index, the business's own partition (one
-- partial index per operation).
CREATE OR REPLACE FUNCTION catalogue_recent_page(p_business integer, p_op text, p_limit integer, p_offset integer, p_docs boolean,
  OUT total bigint, OUT ids integer[], OUT data text)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  total := catalogue_counted(p_business, p_op);
  IF p_op IS NULL THEN
    SELECT coalesce(array_agg(s.property_id ORDER BY s.updated_at DESC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
      SELECT property_id, updated_at FROM catalogue_search WHERE business_id = p_business
      ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
  ELSIF p_op = 'venta' THEN
    SELECT coalesce(array_agg(s.property_id ORDER BY s.updated_at DESC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
      SELECT property_id, updated_at FROM catalogue_search WHERE business_id = p_business AND operations @> '{venta}'::text[]
      ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
  ELSIF p_op = 'alquiler' THEN
    SELECT coalesce(array_agg(s.property_id ORDER BY s.updated_at DESC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
      SELECT property_id, updated_at FROM catalogue_search WHERE business_id = p_business AND operations @> '{alquiler}'::text[]
      ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
  ELSIF p_op = 'traspaso' THEN
    SELECT coalesce(array_agg(s.property_id ORDER BY s.updated_at DESC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
      SELECT property_id, updated_at FROM catalogue_search WHERE business_id = p_business AND operations @> '{traspaso}'::text[]
      ORDER BY updated_at DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
  END IF;
  IF p_docs THEN
    data := catalogue_page_docs(ids);
  END IF;
END $$;

-- A price sort (`sort=price_asc|price_desc`): the price index in that direction, the operation's
-- own (catalogue_<op>_<price>_{asc,desc}_idx) or, without an operation, the sale price's
-- (catalogue_sale_{asc,desc}_idx); listings without that price last, ties by id descending.
CREATE OR REPLACE FUNCTION catalogue_price_sorted_page(p_business integer, p_op text, p_desc boolean, p_limit integer, p_offset integer, p_docs boolean,
  OUT total bigint, OUT ids integer[], OUT data text)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  total := catalogue_counted(p_business, p_op);
  IF p_op IS NULL THEN
    IF p_desc THEN
      SELECT coalesce(array_agg(s.property_id ORDER BY s.price_sale DESC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, price_sale FROM catalogue_entries WHERE business_id = p_business
        ORDER BY price_sale DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
    ELSE
      SELECT coalesce(array_agg(s.property_id ORDER BY s.price_sale ASC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, price_sale FROM catalogue_entries WHERE business_id = p_business
        ORDER BY price_sale ASC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
    END IF;
  ELSIF p_op = 'venta' THEN
    IF p_desc THEN
      SELECT coalesce(array_agg(s.property_id ORDER BY s.price_sale DESC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, price_sale FROM catalogue_entries WHERE business_id = p_business AND operations @> '{venta}'::text[]
        ORDER BY price_sale DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
    ELSE
      SELECT coalesce(array_agg(s.property_id ORDER BY s.price_sale ASC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, price_sale FROM catalogue_entries WHERE business_id = p_business AND operations @> '{venta}'::text[]
        ORDER BY price_sale ASC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
    END IF;
  ELSIF p_op = 'alquiler' THEN
    IF p_desc THEN
      SELECT coalesce(array_agg(s.property_id ORDER BY s.price_rent DESC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, price_rent FROM catalogue_entries WHERE business_id = p_business AND operations @> '{alquiler}'::text[]
        ORDER BY price_rent DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
    ELSE
      SELECT coalesce(array_agg(s.property_id ORDER BY s.price_rent ASC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, price_rent FROM catalogue_entries WHERE business_id = p_business AND operations @> '{alquiler}'::text[]
        ORDER BY price_rent ASC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
    END IF;
  ELSIF p_op = 'traspaso' THEN
    IF p_desc THEN
      SELECT coalesce(array_agg(s.property_id ORDER BY s.price_transfer DESC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, price_transfer FROM catalogue_entries WHERE business_id = p_business AND operations @> '{traspaso}'::text[]
        ORDER BY price_transfer DESC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
    ELSE
      SELECT coalesce(array_agg(s.property_id ORDER BY s.price_transfer ASC NULLS LAST, s.property_id DESC NULLS LAST), '{}') INTO ids FROM (
        SELECT property_id, price_transfer FROM catalogue_entries WHERE business_id = p_business AND operations @> '{traspaso}'::text[]
        ORDER BY price_transfer ASC NULLS LAST, property_id DESC NULLS LAST LIMIT p_limit OFFSET p_offset) s;
    END IF;
  END IF;
  IF p_docs THEN
    data := catalogue_page_docs(ids);
  END IF;
END $$;
