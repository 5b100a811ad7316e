CREATE EXTENSION IF NOT EXISTS postgis;--> statement-breakpoint
CREATE TABLE "businesses" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"watermark_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" serial PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"key_id" text NOT NULL,
	"secret_hash" text NOT NULL,
	"name" text,
	"scopes" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_id_unique" UNIQUE("key_id")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"id" serial PRIMARY KEY NOT NULL,
	"api_key_id" integer NOT NULL,
	"operation" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"state" text DEFAULT 'in_progress' NOT NULL,
	"response_status" smallint,
	"response_body" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "contacts" (
	"id" serial PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"type" text DEFAULT 'demandante' NOT NULL,
	"name" text NOT NULL,
	"email" text,
	"phone" text,
	"source" text,
	"operation" text,
	"property_types" text[] DEFAULT '{}'::text[] NOT NULL,
	"rating" smallint,
	"urgency" text,
	"budget_max" double precision,
	"min_bedrooms" integer,
	"search_location" jsonb,
	"notes" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "properties" (
	"id" serial PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"operations" text[] NOT NULL,
	"type" text NOT NULL,
	"subtype" text,
	"title" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"price_sale" double precision,
	"price_rent" double precision,
	"price_transfer" double precision,
	"location" jsonb NOT NULL,
	"area" jsonb NOT NULL,
	"bedrooms" integer DEFAULT 0 NOT NULL,
	"bathrooms" integer DEFAULT 0 NOT NULL,
	"characteristics" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"features" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"owner_id" integer,
	"is_featured" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'disponible' NOT NULL,
	"published_at" timestamp with time zone,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalogue_entries" (
	"property_id" integer PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"doc" jsonb NOT NULL,
	"status" text NOT NULL,
	"operations" text[] NOT NULL,
	"type" text NOT NULL,
	"subtype_key" text,
	"city_lc" text,
	"price_sale" double precision,
	"price_rent" double precision,
	"price_transfer" double precision,
	"bedrooms" integer NOT NULL,
	"is_featured" boolean NOT NULL,
	"rental_kind" text,
	"geog" geography(Point,4326),
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "property_images" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"business_id" integer NOT NULL,
	"property_id" integer NOT NULL,
	"upload_file_id" uuid,
	"original_key" text NOT NULL,
	"public_key" text,
	"public_url" text,
	"position" integer NOT NULL,
	"is_primary" boolean DEFAULT false NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"width" integer,
	"height" integer,
	"state" text DEFAULT 'processing' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "upload_files" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"session_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"declared_size" bigint NOT NULL,
	"original_key" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"error" text,
	"image_id" uuid
);
--> statement-breakpoint
CREATE TABLE "upload_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"business_id" integer NOT NULL,
	"property_id" integer NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "lead_inquiries" (
	"id" serial PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"contact_id" integer NOT NULL,
	"property_id" integer,
	"message" text NOT NULL,
	"source" text,
	"source_page" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "outreach_attempts" (
	"id" serial PRIMARY KEY NOT NULL,
	"delivery_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"status_code" smallint,
	"latency_ms" integer NOT NULL,
	"error" text,
	"attempted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "outreach_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"inquiry_id" integer NOT NULL,
	"payload" jsonb NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_status_code" smallint,
	"last_error" text,
	"next_attempt_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "outreach_endpoints" (
	"business_id" integer PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"secret_encrypted" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "properties" ADD CONSTRAINT "properties_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "properties" ADD CONSTRAINT "properties_owner_id_contacts_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalogue_entries" ADD CONSTRAINT "catalogue_entries_property_id_properties_id_fk" FOREIGN KEY ("property_id") REFERENCES "public"."properties"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalogue_entries" ADD CONSTRAINT "catalogue_entries_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "property_images" ADD CONSTRAINT "property_images_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "property_images" ADD CONSTRAINT "property_images_property_id_properties_id_fk" FOREIGN KEY ("property_id") REFERENCES "public"."properties"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "property_images" ADD CONSTRAINT "property_images_upload_file_id_upload_files_id_fk" FOREIGN KEY ("upload_file_id") REFERENCES "public"."upload_files"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "upload_files" ADD CONSTRAINT "upload_files_session_id_upload_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."upload_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "upload_sessions" ADD CONSTRAINT "upload_sessions_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "upload_sessions" ADD CONSTRAINT "upload_sessions_property_id_properties_id_fk" FOREIGN KEY ("property_id") REFERENCES "public"."properties"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_inquiries" ADD CONSTRAINT "lead_inquiries_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_inquiries" ADD CONSTRAINT "lead_inquiries_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_inquiries" ADD CONSTRAINT "lead_inquiries_property_id_properties_id_fk" FOREIGN KEY ("property_id") REFERENCES "public"."properties"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outreach_attempts" ADD CONSTRAINT "outreach_attempts_delivery_id_outreach_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."outreach_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outreach_deliveries" ADD CONSTRAINT "outreach_deliveries_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outreach_deliveries" ADD CONSTRAINT "outreach_deliveries_inquiry_id_lead_inquiries_id_fk" FOREIGN KEY ("inquiry_id") REFERENCES "public"."lead_inquiries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outreach_endpoints" ADD CONSTRAINT "outreach_endpoints_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_business_idx" ON "api_keys" USING btree ("business_id");--> statement-breakpoint
CREATE UNIQUE INDEX "idempotency_keys_scope_uq" ON "idempotency_keys" USING btree ("api_key_id","operation","key");--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "contacts_business_phone_uq" ON "contacts" USING btree ("business_id","phone") WHERE "contacts"."phone" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "contacts_business_email_uq" ON "contacts" USING btree ("business_id",lower("email")) WHERE "contacts"."email" is not null;--> statement-breakpoint
CREATE INDEX "contacts_business_created_idx" ON "contacts" USING btree ("business_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "contacts_business_updated_idx" ON "contacts" USING btree ("business_id","updated_at");--> statement-breakpoint
CREATE INDEX "properties_business_idx" ON "properties" USING btree ("business_id","id");--> statement-breakpoint
CREATE INDEX "catalogue_business_updated_idx" ON "catalogue_entries" USING btree ("business_id","updated_at" DESC NULLS LAST,"property_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "catalogue_geog_gist" ON "catalogue_entries" USING gist ("geog");--> statement-breakpoint
CREATE INDEX "catalogue_business_sale_idx" ON "catalogue_entries" USING btree ("business_id","price_sale","property_id");--> statement-breakpoint
CREATE INDEX "catalogue_business_rent_idx" ON "catalogue_entries" USING btree ("business_id","price_rent","property_id");--> statement-breakpoint
CREATE INDEX "catalogue_business_city_idx" ON "catalogue_entries" USING btree ("business_id","city_lc","type");--> statement-breakpoint
CREATE INDEX "catalogue_operations_gin" ON "catalogue_entries" USING gin ("operations");--> statement-breakpoint
CREATE INDEX "property_images_property_idx" ON "property_images" USING btree ("property_id","position");--> statement-breakpoint
CREATE INDEX "upload_files_session_idx" ON "upload_files" USING btree ("session_id","position");--> statement-breakpoint
CREATE INDEX "upload_sessions_property_idx" ON "upload_sessions" USING btree ("property_id");--> statement-breakpoint
CREATE INDEX "upload_sessions_expiry_idx" ON "upload_sessions" USING btree ("state","expires_at");--> statement-breakpoint
CREATE INDEX "lead_inquiries_contact_idx" ON "lead_inquiries" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "outreach_attempts_delivery_idx" ON "outreach_attempts" USING btree ("delivery_id","attempt");--> statement-breakpoint
CREATE INDEX "outreach_deliveries_business_idx" ON "outreach_deliveries" USING btree ("business_id","created_at");