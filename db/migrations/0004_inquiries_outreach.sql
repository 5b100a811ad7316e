DROP INDEX "outreach_attempts_delivery_idx";--> statement-breakpoint
ALTER TABLE "lead_inquiries" ADD COLUMN "contact_name" text NOT NULL;--> statement-breakpoint
ALTER TABLE "lead_inquiries" ADD COLUMN "contact_email" text;--> statement-breakpoint
ALTER TABLE "lead_inquiries" ADD COLUMN "contact_phone" text;--> statement-breakpoint
CREATE UNIQUE INDEX "outreach_attempts_delivery_attempt_uq" ON "outreach_attempts" USING btree ("delivery_id","attempt");--> statement-breakpoint
CREATE INDEX "outreach_deliveries_pending_idx" ON "outreach_deliveries" USING btree ("created_at") WHERE "outreach_deliveries"."state" = 'pending';