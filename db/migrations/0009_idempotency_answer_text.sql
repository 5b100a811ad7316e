-- Hardening §17: a replay is the first answer's body byte for byte, so the answer is kept as the
-- exact text that was sent; jsonb reordered its keys. Refusals stored in the former jsonb form
-- ({"__error": ...}) cannot be replayed as text: they changed nothing, so they are forgotten and a
-- retry of such a request is judged again.
DELETE FROM "idempotency_keys" WHERE "response_body" ? '__error';--> statement-breakpoint
ALTER TABLE "idempotency_keys" ALTER COLUMN "response_body" SET DATA TYPE text USING "response_body"::text;
