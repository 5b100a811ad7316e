-- The outbox becomes its own table. Until now an event was written into `events` in the change's
-- transaction with an id, a provisional sequence, its rendered JSON and four index entries, and
-- the relay rewrote the row to number it. That cost POST /leads ~45 µs of PostgreSQL CPU per
-- request (pgbench at c=16, synchronous_commit off: 90 µs without the event, 135 with; ~0.1 ms in
-- `bun run bench events`), i.e. 1.14-1.25x its p95 without events. A row in event_outbox holds
-- only what the change knows (business, type, time, data or the contact row as row_to_json wrote
-- it) under one bigint key: 110 µs. The relay now mints the id, renders a lead.created, numbers
-- and inserts the event into `events` once, and deletes the outbox rows, in one transaction
-- (docs/events.md "Events (§10.1)").
CREATE TABLE "event_outbox" (
	"n" bigserial PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"type" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	"data" json,
	"contact" json
);
--> statement-breakpoint
-- Events recorded but not yet relayed move to the outbox in the order they were recorded (their
-- provisional sequence). No one has seen them: GET /events and deliveries only ever read relayed
-- events, so their ids (minted again when relayed) were never shown.
INSERT INTO event_outbox (business_id, type, created_at, data)
  SELECT business_id, type, created_at, data FROM events WHERE relayed_at IS NULL ORDER BY sequence;
--> statement-breakpoint
DELETE FROM events WHERE relayed_at IS NULL;
--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT IF EXISTS "events_business_id_businesses_id_fk";
--> statement-breakpoint
DROP INDEX IF EXISTS "events_unrelayed_idx";
--> statement-breakpoint
ALTER TABLE "events" DROP COLUMN IF EXISTS "relayed_at";
--> statement-breakpoint
-- lead.created for every contact inserted, whoever inserts it (POST /leads, an inquiry that
-- creates its lead, the rental-ingest worker): the row as it was inserted, rendered when relayed
-- (lead_created_data). A duplicate skipped by ON CONFLICT DO NOTHING fires nothing.
CREATE OR REPLACE FUNCTION contacts_lead_created() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_outbox (business_id, type, contact) VALUES (NEW.business_id, 'lead.created', row_to_json(NEW));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- The service's events are now a plain INSERT into event_outbox (db/queries/events.ts).
DROP FUNCTION IF EXISTS append_event(integer, text, text, text);
--> statement-breakpoint
DROP SEQUENCE IF EXISTS "public"."events_pending_order_seq";
--> statement-breakpoint
-- A lead.created's data from the contact row as row_to_json wrote it: the Lead object of
-- GET /leads/{id}, fields in the contract's order, each value's JSON as written, timestamps as
-- JavaScript's toISOString writes them (UTC, milliseconds, truncated). The row is parsed once,
-- into jsonb: `->` on json parses the text again for every field (23 against 9 µs a row).
CREATE OR REPLACE FUNCTION lead_created_data(contact json) RETURNS json
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  c jsonb := contact::jsonb;
BEGIN
  RETURN ('{"object":{"id":' || (c->'id')::text
    || ',"type":' || coalesce((c->'type')::text, 'null')
    || ',"name":' || coalesce((c->'name')::text, 'null')
    || ',"email":' || coalesce((c->'email')::text, 'null')
    || ',"phone":' || coalesce((c->'phone')::text, 'null')
    || ',"source":' || coalesce((c->'source')::text, 'null')
    || ',"operation":' || coalesce((c->'operation')::text, 'null')
    || ',"property_types":' || coalesce((c->'property_types')::text, '[]')
    || ',"rating":' || coalesce((c->'rating')::text, 'null')
    || ',"urgency":' || coalesce((c->'urgency')::text, 'null')
    || ',"budget_max":' || coalesce((c->'budget_max')::text, 'null')
    || ',"min_bedrooms":' || coalesce((c->'min_bedrooms')::text, 'null')
    || ',"search_location":' || coalesce((c->'search_location')::text, 'null')
    || ',"notes":' || coalesce((c->'notes')::text, '""')
    || ',"created_at":"' || to_char((c->>'created_at')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    || '","updated_at":"' || to_char((c->>'updated_at')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}}')::json;
END $$;
--> statement-breakpoint
-- The relay's batch (db/queries/events.ts, sequenceOutboxEvents): up to p_limit committed outbox
-- rows from key p_after on, oldest first, locked (SKIP LOCKED: a second relay takes others); per
-- business one counter upsert, businesses in id order so two relays cannot deadlock; each row
-- becomes an event with a new id and its business's next sequence, in recording order; the
-- outbox rows go. One batch at a time across every process (a transaction-scoped advisory lock,
-- safe behind a transaction-mode pooler): two batches upserting the same businesses' counters
-- could deadlock. PL/pgSQL keeps the plan per server connection: planning this statement took
-- 0.8 ms, more than running it for a small batch.
CREATE OR REPLACE FUNCTION relay_outbox(p_limit integer, p_after bigint)
RETURNS TABLE (event_id text, event_business integer, event_type text, outbox_n bigint)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(727002);
  RETURN QUERY
    WITH claimed AS (
      SELECT o.n, o.business_id, o.type, o.created_at, o.data, o.contact FROM event_outbox o
      WHERE o.n > p_after ORDER BY o.n LIMIT p_limit FOR UPDATE SKIP LOCKED
    ), counts AS (
      SELECT c.business_id, count(*) AS how_many FROM claimed c GROUP BY c.business_id
    ), counters AS (
      INSERT INTO event_counters AS k (business_id, last_sequence)
      SELECT t.business_id, t.how_many FROM counts t ORDER BY t.business_id
      ON CONFLICT (business_id) DO UPDATE SET last_sequence = k.last_sequence + excluded.last_sequence
      RETURNING k.business_id, k.last_sequence
    ), taken AS (
      DELETE FROM event_outbox o USING claimed c WHERE o.n = c.n
    ), inserted AS (
      INSERT INTO events AS e (id, business_id, type, sequence, created_at, data)
      SELECT new_event_id(), c.business_id, c.type,
             k.last_sequence - t.how_many + row_number() OVER (PARTITION BY c.business_id ORDER BY c.n),
             c.created_at, coalesce(c.data, lead_created_data(c.contact))
      FROM claimed c JOIN counts t ON t.business_id = c.business_id JOIN counters k ON k.business_id = c.business_id
      ORDER BY c.n
      RETURNING e.id, e.business_id, e.type, e.sequence
    )
    SELECT i.id, i.business_id, i.type, (SELECT max(c.n) FROM claimed c) FROM inserted i ORDER BY i.business_id, i.sequence;
END $$;
--> statement-breakpoint
-- A deleted business's outbox rows go with its events (migration 0027).
CREATE OR REPLACE FUNCTION businesses_delete_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM events WHERE business_id IN (SELECT id FROM deleted);
  DELETE FROM event_outbox WHERE business_id IN (SELECT id FROM deleted);
  RETURN NULL;
END $$;
