-- Publishable keys (contract §16.1): a key is `secret` (every existing key) or `publishable`, which
-- is safe to show in a web page: exactly the ingest scope, the origins a browser may use it from,
-- and its two rate limits. The check keeps the two kinds apart in the table itself.
ALTER TABLE "api_keys" ADD COLUMN "kind" text DEFAULT 'secret' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "origins" text[];--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "rate_per_ip" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "rate" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_kind_check" CHECK (("api_keys"."kind" = 'secret' and "api_keys"."origins" is null and "api_keys"."rate_per_ip" is null and "api_keys"."rate" is null) or ("api_keys"."kind" = 'publishable' and "api_keys"."scopes" = array['leads:ingest'] and cardinality("api_keys"."origins") between 1 and 20 and "api_keys"."rate_per_ip" is not null and "api_keys"."rate" is not null));