CREATE TABLE "catalogue_price_counts" (
	"business_id" integer NOT NULL,
	"op" text NOT NULL,
	"bucket" bigint NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "catalogue_price_counts_business_id_op_bucket_pk" PRIMARY KEY("business_id","op","bucket")
);
--> statement-breakpoint
ALTER TABLE "catalogue_price_counts" ADD CONSTRAINT "catalogue_price_counts_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Listings per business, operation and price bucket, kept by statement-level triggers of
-- catalogue_entries in the same statement (like catalogue_counts). The total of an operation's
-- price range is then the sum of the buckets wholly inside the range plus the listings of the
-- partial buckets at its two edges, counted from the price index: a range of 20,000 listings of a
-- 100,000-listing business read 20,000 index entries per request, ~3.4 ms (db/queries/catalogue.ts).
-- Widths: a tenth of a typical price step of each market, so an edge holds ~1% of the listings.
CREATE FUNCTION catalogue_price_width(op text) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE op WHEN 'venta' THEN 10000 WHEN 'alquiler' THEN 50 WHEN 'traspaso' THEN 5000 END;--> statement-breakpoint
-- Clamped so that no price can overflow bigint (prices have no upper bound); the two extreme
-- buckets are never summed as whole buckets of a range with that bound.
CREATE FUNCTION catalogue_price_bucket(price float8, width float8) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN least(greatest(floor(price / width), (-1e15)::float8), (1e15)::float8)::bigint;--> statement-breakpoint
CREATE FUNCTION catalogue_price_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalogue_price_counts (business_id, op, bucket, n)
  SELECT r.business_id, v.op, catalogue_price_bucket(v.price, catalogue_price_width(v.op)), count(*)
  FROM new_rows r CROSS JOIN LATERAL (VALUES ('venta', r.price_sale), ('alquiler', r.price_rent), ('traspaso', r.price_transfer)) v(op, price)
  WHERE r.operations @> ARRAY[v.op] AND v.price IS NOT NULL
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (business_id, op, bucket) DO UPDATE SET n = catalogue_price_counts.n + excluded.n;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION catalogue_price_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalogue_price_counts c SET n = c.n - d.n
  FROM (SELECT r.business_id, v.op, catalogue_price_bucket(v.price, catalogue_price_width(v.op)) AS bucket, count(*) AS n
        FROM old_rows r CROSS JOIN LATERAL (VALUES ('venta', r.price_sale), ('alquiler', r.price_rent), ('traspaso', r.price_transfer)) v(op, price)
        WHERE r.operations @> ARRAY[v.op] AND v.price IS NOT NULL
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) d
  WHERE c.business_id = d.business_id AND c.op = d.op AND c.bucket = d.bucket;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION catalogue_price_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$;--> statement-breakpoint
CREATE FUNCTION catalogue_price_counts_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM catalogue_price_counts;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER catalogue_price_counts_insert AFTER INSERT ON catalogue_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_price_counts_after_insert();--> statement-breakpoint
CREATE TRIGGER catalogue_price_counts_delete AFTER DELETE ON catalogue_entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_price_counts_after_delete();--> statement-breakpoint
CREATE TRIGGER catalogue_price_counts_update AFTER UPDATE ON catalogue_entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_price_counts_after_update();--> statement-breakpoint
CREATE TRIGGER catalogue_price_counts_truncate AFTER TRUNCATE ON catalogue_entries FOR EACH STATEMENT EXECUTE FUNCTION catalogue_price_counts_after_truncate();--> statement-breakpoint
INSERT INTO catalogue_price_counts (business_id, op, bucket, n)
SELECT r.business_id, v.op, catalogue_price_bucket(v.price, catalogue_price_width(v.op)), count(*)
FROM catalogue_entries r CROSS JOIN LATERAL (VALUES ('venta', r.price_sale), ('alquiler', r.price_rent), ('traspaso', r.price_transfer)) v(op, price)
WHERE r.operations @> ARRAY[v.op] AND v.price IS NOT NULL
GROUP BY 1, 2, 3;
