-- What a webhook endpoint is sent is bounded by what the key that set it up can read (contract §15
-- §10.1 revised: property.created/updated, image.* and video.* need properties:write as well as
-- properties:read). An endpoint does not record which key created it, but API key scopes never
-- change: an existing endpoint gets the read scopes that every key of its business able to have
-- set it up (webhooks:write, created before the endpoint's last change) holds. With one such key,
-- or several of the same read scopes, that is exactly the creator's; with a partner key among
-- them, the partner's (the narrower). The rule of 1.1 guaranteed the read scope of every family
-- the endpoint names, so those are kept in any case.
ALTER TABLE "webhook_endpoints" ADD COLUMN "event_scopes" text[];
--> statement-breakpoint
UPDATE "webhook_endpoints" w SET "event_scopes" = ARRAY(
  SELECT s FROM unnest(ARRAY['leads:read', 'properties:read', 'properties:write']) AS s
  WHERE (
      EXISTS (SELECT 1 FROM api_keys k WHERE k.business_id = w.business_id AND 'webhooks:write' = ANY (k.scopes) AND k.created_at <= w.updated_at)
      AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.business_id = w.business_id AND 'webhooks:write' = ANY (k.scopes) AND k.created_at <= w.updated_at AND NOT (s = ANY (k.scopes)))
    )
    OR (s = 'leads:read' AND EXISTS (SELECT 1 FROM unnest(w.enabled_events) e WHERE e = '*' OR e LIKE 'lead.%' OR e LIKE 'inquiry.%'))
    OR (s = 'properties:read' AND EXISTS (SELECT 1 FROM unnest(w.enabled_events) e WHERE e = '*' OR e LIKE 'property.%' OR e LIKE 'image.%' OR e LIKE 'video.%'))
  ORDER BY s
);
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ALTER COLUMN "event_scopes" SET NOT NULL;
