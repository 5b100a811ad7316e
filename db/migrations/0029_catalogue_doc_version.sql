-- The derivation of the public document the stored catalogue rows were built with
-- (shared/listings/catalogue-upgrade.ts). Version 1 publishes `description` and each
-- `translations` description sanitised (contract §15 §3 `description`): rows stored before it
-- hold the HTML as it was sent, so on a catalogue that has rows the version starts at 0 and the
-- first worker to start queues the rebuild of every business's rows. An empty catalogue has
-- nothing stored before: it starts at 1.
CREATE TABLE "catalogue_derivation" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"version" integer NOT NULL,
	CONSTRAINT "catalogue_derivation_one_row" CHECK ("catalogue_derivation"."id")
);
--> statement-breakpoint
INSERT INTO "catalogue_derivation" ("id", "version")
  SELECT true, CASE WHEN EXISTS (SELECT 1 FROM "catalogue_entries") THEN 0 ELSE 1 END;
