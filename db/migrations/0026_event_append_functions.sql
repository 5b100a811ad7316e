-- Events appended by PL/pgSQL, planned once per server connection instead of on every request.
--
-- The service sends no named prepared statements (PgBouncer in transaction mode, db/client.ts), so
-- PostgreSQL parsed, analysed and planned each event's INSERT on every request, and the service
-- built and sent it: POST /leads cost 1.2-1.4x the same request without events
-- (`bun run bench events --phases 1`). A function's or trigger's statements are planned once per
-- server connection and kept, whichever client transaction runs there, so this holds behind
-- PgBouncer too. Figures in docs/events.md "Figures".

-- An event id: `evt_`, the minting millisecond in 11 hex digits (ids index at the right edge of
-- events_pkey, docs/events.md "Event ids"), then 15 characters of 90 random bits (12 random bytes
-- of a version-4 UUID in base64, `+` and `/` read as `x` and `y`). shared/events/record.ts mints
-- the same shape.
CREATE OR REPLACE FUNCTION new_event_id() RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $$
DECLARE
  u bytea := uuid_send(gen_random_uuid());
BEGIN
  RETURN 'evt_' || lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 11, '0')
    || translate(left(encode(substr(u, 1, 6) || substr(u, 10, 6), 'base64'), 15), '+/', 'xy');
END $$;
--> statement-breakpoint
-- One event row of a business; its sequence is provisional until the relay numbers it
-- (db/queries/events.ts, appendEvents), its created_at the statement's clock, its data the json
-- text as sent.
CREATE OR REPLACE FUNCTION append_event(p_business integer, p_id text, p_type text, p_data text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (id, business_id, type, sequence, data, created_at)
  VALUES (p_id, p_business, p_type, nextval('events_pending_order_seq') - 4611686018427387904, p_data::json, clock_timestamp());
END $$;
--> statement-breakpoint
-- lead.created for every contact inserted, whoever inserts it (POST /leads, an inquiry that
-- creates its lead, the rental-ingest worker): the Lead object of GET /leads/{id}, fields in the
-- contract's order, timestamps as JavaScript's toISOString writes them (UTC, milliseconds,
-- truncated). A duplicate skipped by ON CONFLICT DO NOTHING fires nothing. Row-level: a
-- statement-level trigger reading a transition table cost twice as much per single-row insert.
CREATE OR REPLACE FUNCTION contacts_lead_created() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM append_event(NEW.business_id, new_event_id(), 'lead.created',
    '{"object":{"id":' || NEW.id
      || ',"type":' || to_json(NEW.type)
      || ',"name":' || to_json(NEW.name)
      || ',"email":' || coalesce(to_json(NEW.email)::text, 'null')
      || ',"phone":' || coalesce(to_json(NEW.phone)::text, 'null')
      || ',"source":' || coalesce(to_json(NEW.source)::text, 'null')
      || ',"operation":' || coalesce(to_json(NEW.operation)::text, 'null')
      || ',"property_types":' || to_json(NEW.property_types)
      || ',"rating":' || coalesce(NEW.rating::text, 'null')
      || ',"urgency":' || coalesce(to_json(NEW.urgency)::text, 'null')
      || ',"budget_max":' || coalesce(to_json(NEW.budget_max)::text, 'null')
      || ',"min_bedrooms":' || coalesce(NEW.min_bedrooms::text, 'null')
      || ',"search_location":' || coalesce(NEW.search_location::text, 'null')
      || ',"notes":' || to_json(NEW.notes)
      || ',"created_at":"' || to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      || '","updated_at":"' || to_char(NEW.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}}');
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS contacts_lead_created ON contacts;
--> statement-breakpoint
CREATE TRIGGER contacts_lead_created AFTER INSERT ON contacts FOR EACH ROW EXECUTE FUNCTION contacts_lead_created();
