-- events.business_id no longer references businesses as a foreign key. The key's check takes a
-- KEY SHARE lock on the business row from every transaction that records an event, and
-- concurrent lockers of one row make PostgreSQL write a MultiXact for each transaction (pgbench,
-- c=16: one MultiXact of ~9 members per transaction). A PATCH /properties locks the business row
-- for nothing else. `bun run bench events --phases 1 --pairs 5`, median p95 ratio with/without
-- events: POST /leads 1.25 -> 1.13, PATCH /properties 1.31 -> 1.08 (docs/events.md "Figures").
-- An event is only ever written for the business of the change it records, which exists; what
-- the key still did, deleting a business's events with it, is this trigger's (a business is
-- deleted by hand only).
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_business_id_businesses_id_fk;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION businesses_delete_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM events WHERE business_id IN (SELECT id FROM deleted);
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS businesses_delete_events ON businesses;
--> statement-breakpoint
CREATE TRIGGER businesses_delete_events AFTER DELETE ON businesses REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION businesses_delete_events();
