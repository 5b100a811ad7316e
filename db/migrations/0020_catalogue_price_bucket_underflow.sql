-- A price under the bucket width (a denormal such as 1e-320 included) divided by the width raised
-- "value out of range: underflow" in the triggers of 0019, failing the write with a 500 (found by
-- the fuzz test). Such a price is in bucket 0 (or -1 below zero) without dividing.
CREATE OR REPLACE FUNCTION catalogue_price_bucket(price float8, width float8) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN abs(price) < width THEN (CASE WHEN price < 0 THEN -1 ELSE 0 END)::bigint
  ELSE least(greatest(floor(price / width), (-1e15)::float8), (1e15)::float8)::bigint END;
