-- An event's `data` is written once, read as text (GET /events builds each event's JSON in SQL)
-- or parsed by the driver, and never queried inside but by erasure (rare). As jsonb, PostgreSQL
-- parsed it on every insert and rendered it back to text on every read; as `json` it keeps the
-- text. Erasure's `data->'object'->>'id'` works on json as it did on jsonb.
-- The ALTER rewrites the table under an exclusive lock; db/migrate.ts vacuums it afterwards
-- (docs/operations.md "Migrations that rewrite a table").
ALTER TABLE "events" ALTER COLUMN "data" SET DATA TYPE json USING "data"::json;
