-- Full-text search of the catalogue (contract §11, §15): the weighted vector of a public
-- document, kept in catalogue_entries.tsv by a row trigger, and the query of `q`. The text search
-- configurations es_unaccent and en_unaccent are a migration's (objects, not code).
-- docs/properties.md "Search" explains the choices and the measured plans.

-- Repeatable: the current definition of every function and trigger below, applied by the
-- migrator (db/migrate.ts) after the migrations whenever this file's checksum changes, in one
-- transaction. CREATE OR REPLACE keeps every object's identity (no table lock, no gap); a
-- change of a function's arguments or result, or a removal, needs a migration that drops the
-- old one first. test/db/catalogue-functions.test.ts checks the database holds exactly these.

-- The text of an HTML description: tags become spaces (their attributes are never searched),
-- an accented letter written as an entity keeps its letter (&aacute; → a: accents are ignored
-- anyway), any other entity separates words. SQL-standard bodies bind every name when created,
-- so no search_path can change what these compute.
CREATE OR REPLACE FUNCTION catalogue_html_text(html text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN regexp_replace(
  regexp_replace(regexp_replace(html, '<[^>]*>', ' ', 'g'), '&([A-Za-z])(acute|grave|uml|circ|tilde|cedil|ring);', '\1', 'g'),
  '&#?[A-Za-z0-9]+;', ' ', 'g');
-- The weighted search vector of a public document (contract §11, §15: title, description,
-- city, province, subtype label and every translation; never address, building or postal code):
-- A titles, B subtype label, city and province, C descriptions. Every text goes through the
-- Spanish configuration (so one query matches words of any language the same way); the English
-- translation also through the English one, so English inflections match ("pool" finds
-- "pools"). "Sin Especificar" is the absence of a subtype, not a label. Each description counts
-- its first 15,000 characters: the whole vector stays far below tsvector's 1 MB limit for any
-- text the API accepts, so no listing can fail to save.
CREATE OR REPLACE FUNCTION catalogue_search_vector(doc jsonb) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
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
  || setweight(to_tsvector('en_unaccent', coalesce(left(catalogue_html_text(doc#>>'{specs,translations,en,description}'), 15000), '')), 'C');
-- `q` as a tsquery: web-search syntax ("a phrase", -word, or) never fails to parse. A listing
-- matches when the query holds in Spanish or in English. A query that only excludes
-- (`-piscinas`) must hold in both, else the language in which the word stems differently
-- would let every listing through.
CREATE OR REPLACE FUNCTION catalogue_search_query(q text) RETURNS tsquery LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN querytree(websearch_to_tsquery('es_unaccent', q)) = 'T'
  THEN websearch_to_tsquery('es_unaccent', q) && websearch_to_tsquery('en_unaccent', q)
  ELSE websearch_to_tsquery('es_unaccent', q) || websearch_to_tsquery('en_unaccent', q) END;
CREATE OR REPLACE FUNCTION catalogue_entries_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.doc::text IS DISTINCT FROM OLD.doc::text OR NEW.tsv IS NULL THEN
    NEW.tsv := catalogue_search_vector(NEW.doc::jsonb);
  END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER catalogue_entries_search_vector BEFORE INSERT OR UPDATE OF doc ON catalogue_entries FOR EACH ROW EXECUTE FUNCTION catalogue_entries_search_vector();
