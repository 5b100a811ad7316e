-- Full-text search of the catalogue (contract §11) and the catalogue version (architecture.md
-- "Catalogue version"). docs/properties.md "Search" explains the choices and the measured plans.
CREATE EXTENSION IF NOT EXISTS unaccent;--> statement-breakpoint
-- btree_gin: the GIN index below carries business_id beside the vector.
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
-- Spanish and English stemming with accents ignored: the unaccent dictionary filters every word
-- before the stemmer sees it ("Ático" → atic, "piscinas" → piscin). A configuration is what
-- to_tsvector and websearch_to_tsquery name, so both sides fold words the same way, and
-- to_tsvector(regconfig, text) is IMMUTABLE, which the functions below need.
CREATE TEXT SEARCH CONFIGURATION es_unaccent (COPY = pg_catalog.spanish);--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION es_unaccent ALTER MAPPING FOR hword, hword_part, word WITH unaccent, spanish_stem;--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION en_unaccent (COPY = pg_catalog.english);--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION en_unaccent ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;--> statement-breakpoint
-- The text of an HTML description: tags become spaces (their attributes are never searched),
-- an accented letter written as an entity keeps its letter (&aacute; → a: accents are ignored
-- anyway), any other entity separates words. SQL-standard bodies bind every name when created,
-- so no search_path can change what these compute.
CREATE FUNCTION catalogue_html_text(html text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN regexp_replace(
  regexp_replace(regexp_replace(html, '<[^>]*>', ' ', 'g'), '&([A-Za-z])(acute|grave|uml|circ|tilde|cedil|ring);', '\1', 'g'),
  '&#?[A-Za-z0-9]+;', ' ', 'g');--> statement-breakpoint
-- The weighted search vector of a public document (contract §11, §15: title, description,
-- city, province, subtype label and every translation; never address, building or postal code):
-- A titles, B subtype label, city and province, C descriptions. Every text goes through the
-- Spanish configuration (so one query matches words of any language the same way); the English
-- translation also through the English one, so English inflections match ("pool" finds
-- "pools"). "Sin Especificar" is the absence of a subtype, not a label. Each description counts
-- its first 15,000 characters: the whole vector stays far below tsvector's 1 MB limit for any
-- text the API accepts, so no listing can fail to save.
CREATE FUNCTION catalogue_search_vector(doc jsonb) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN setweight(to_tsvector('es_unaccent', concat_ws(' ', doc->>'title', doc#>>'{specs,translations,en,title}', doc#>>'{specs,translations,ca,title}',
    doc#>>'{specs,translations,fr,title}', doc#>>'{specs,translations,de,title}', doc#>>'{specs,translations,pt,title}', doc#>>'{specs,translations,it,title}')), 'A')
  || setweight(to_tsvector('en_unaccent', coalesce(doc#>>'{specs,translations,en,title}', '')), 'A')
  || setweight(to_tsvector('es_unaccent', concat_ws(' ', nullif(doc->>'subtype', 'Sin Especificar'), doc->>'city', doc->>'province')), 'B')
  || setweight(to_tsvector('es_unaccent', concat_ws(' ',
       left(catalogue_html_text(doc->>'description'), 15000),
       left(catalogue_html_text(doc#>>'{specs,translations,en,description}'), 15000),
       left(catalogue_html_text(doc#>>'{specs,translations,ca,description}'), 15000),
       left(catalogue_html_text(doc#>>'{specs,translations,fr,description}'), 15000),
       left(catalogue_html_text(doc#>>'{specs,translations,de,description}'), 15000),
       left(catalogue_html_text(doc#>>'{specs,translations,pt,description}'), 15000),
       left(catalogue_html_text(doc#>>'{specs,translations,it,description}'), 15000))), 'C')
  || setweight(to_tsvector('en_unaccent', coalesce(left(catalogue_html_text(doc#>>'{specs,translations,en,description}'), 15000), '')), 'C');--> statement-breakpoint
-- `q` as a tsquery: web-search syntax ("a phrase", -word, or) never fails to parse. A listing
-- matches when the query holds in Spanish or in English. A query that only excludes
-- (`-piscinas`) must hold in both, else the language in which the word stems differently
-- would let every listing through.
CREATE FUNCTION catalogue_search_query(q text) RETURNS tsquery LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN querytree(websearch_to_tsquery('es_unaccent', q)) = 'T'
  THEN websearch_to_tsquery('es_unaccent', q) && websearch_to_tsquery('en_unaccent', q)
  ELSE websearch_to_tsquery('es_unaccent', q) || websearch_to_tsquery('en_unaccent', q) END;--> statement-breakpoint
ALTER TABLE "businesses" ADD COLUMN "catalogue_version" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "businesses" ADD COLUMN "catalogue_changed_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "catalogue_entries" ADD COLUMN "changed_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "catalogue_entries" ADD COLUMN "tsv" tsvector;--> statement-breakpoint
-- The vector follows the document in the same statement, whoever writes the row. A row whose
-- vector is null (stored before this migration) gets one the next time it is rebuilt: the
-- backfill is `bun run cli catalogue reindex`, run once after deploying (docs/properties.md),
-- rather than an UPDATE here, because the migration's single transaction would keep
-- catalogue_entries locked against every read while it rewrote each row.
CREATE FUNCTION catalogue_entries_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.doc IS DISTINCT FROM OLD.doc OR NEW.tsv IS NULL THEN
    NEW.tsv := catalogue_search_vector(NEW.doc);
  END IF;
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER catalogue_entries_search_vector BEFORE INSERT OR UPDATE OF doc ON catalogue_entries FOR EACH ROW EXECUTE FUNCTION catalogue_entries_search_vector();--> statement-breakpoint
CREATE INDEX "catalogue_business_tsv_gin" ON "catalogue_entries" USING gin ("business_id","tsv");
