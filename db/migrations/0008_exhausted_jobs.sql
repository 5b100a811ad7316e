-- Jobs that exhaust their retries leave their data failed with a reason (README "Exhausted
-- jobs"): an image keeps why it failed, and an upload file failed by an exhausted job (not by
-- its content) is marked so its original is kept for `cli queues retry`.
ALTER TABLE "property_images" ADD COLUMN "error" text;--> statement-breakpoint
ALTER TABLE "upload_files" ADD COLUMN "exhausted_at" timestamp with time zone;--> statement-breakpoint
-- The media sweep looks for images processing too long without a job.
CREATE INDEX "property_images_processing_idx" ON "property_images" USING btree ("created_at") WHERE "property_images"."state" = 'processing';
