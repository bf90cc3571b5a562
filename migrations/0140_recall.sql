-- Recall: memory search that reads a memory with the memories saved around it, knows who said it
-- and when, and searches past conversations (messages) with the same ranking
-- (src/memory/store/search-memories.ts, context-ranking.ts).

-- Who said a memory written as a transcript line, `[id] (when) Name: text` or `Name: text`
-- (the id and the time are optional): the name, lowercased; NULL when the text is not such a line.
CREATE FUNCTION memory_text_speaker(content text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT lower((regexp_match(
      content,
      '^(?:\[[^]]{1,40}\]\s*)?(?:\([^)]{1,80}\)\s*)?([[:upper:]][[:alpha:]''.-]{0,30}(?:\s[[:upper:]][[:alpha:]''.-]{0,30}){0,2}):\s'
    ))[1])
  $$;

-- The first calendar date a text names — `2023-05-08`, `8 May, 2023`, `8th May 2023`,
-- `May 8, 2023` — or NULL (no date, or not a real day). What a memory is about happened then.
CREATE FUNCTION memory_text_date(content text) RETURNS date
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
  AS $$
DECLARE
  months constant text[] := ARRAY['jan','feb','mar','apr','may','jun','jul','aug','sep','oct','nov','dec'];
  month_names constant text := '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
  found text[];
  y int;
  m int;
  d int;
BEGIN
  found := regexp_match(content, '\m(\d{4})-(\d{2})-(\d{2})\M');
  IF found IS NOT NULL THEN
    y := found[1]::int; m := found[2]::int; d := found[3]::int;
  ELSE
    found := regexp_match(content, '\m(\d{1,2})(?:st|nd|rd|th)?\s+' || month_names || '\.?,?\s+(\d{4})\M', 'i');
    IF found IS NOT NULL THEN
      d := found[1]::int; m := array_position(months, lower(left(found[2], 3))); y := found[3]::int;
    ELSE
      found := regexp_match(content, '\m' || month_names || '\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\M', 'i');
      IF found IS NULL THEN RETURN NULL; END IF;
      m := array_position(months, lower(left(found[1], 3))); d := found[2]::int; y := found[3]::int;
    END IF;
  END IF;
  IF m IS NULL OR m < 1 OR m > 12 OR y < 1000 OR y > 9999 OR d < 1
     OR d > extract(day FROM make_date(y, m, 1) + interval '1 month - 1 day') THEN
    RETURN NULL;
  END IF;
  RETURN make_date(y, m, d);
END $$;

-- Who said a memory and when it happened, kept with the content; and its place in its user's
-- save order (a memory's neighbours are the memories its user saved just before and after it),
-- numbered 1, 2, 3… per user by a trigger on every insert, whatever the path.
ALTER TABLE memory_entries
  ADD COLUMN position bigint,
  ADD COLUMN speaker text GENERATED ALWAYS AS (memory_text_speaker(content)) STORED,
  ADD COLUMN happened_on date GENERATED ALWAYS AS (memory_text_date(content)) STORED;

UPDATE memory_entries m SET position = numbered.n
FROM (
  SELECT id, row_number() OVER (PARTITION BY user_id ORDER BY created_at, id) AS n FROM memory_entries
) numbered
WHERE numbered.id = m.id;
ALTER TABLE memory_entries ALTER COLUMN position SET NOT NULL;
CREATE INDEX memory_entries_user_position_idx ON memory_entries (user_id, position);
CREATE INDEX memory_entries_user_speaker_idx ON memory_entries (user_id, speaker) WHERE speaker IS NOT NULL;

-- Rows inserted earlier by the same statement are visible here, so a bulk insert numbers its
-- rows in order. Concurrent inserts for one user are serialized by the lock on the user's row.
CREATE FUNCTION memory_position_before_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM users WHERE id = NEW.user_id FOR NO KEY UPDATE;
  NEW.position := COALESCE(
    (SELECT m.position FROM memory_entries m WHERE m.user_id = NEW.user_id ORDER BY m.position DESC LIMIT 1),
    0) + 1;
  RETURN NEW;
END $$;
CREATE TRIGGER memory_position_insert BEFORE INSERT ON memory_entries
  FOR EACH ROW EXECUTE FUNCTION memory_position_before_insert();

-- Messages become searchable: what the user and Steward said (tool results and system notes
-- are not conversation). `speaker` names who wrote an imported message (NULL: the role says).
-- `position` numbers a conversation's searchable messages 1, 2, 3… (a message's neighbours are
-- the ones around it), by a trigger as for memories; NULL for the others.
ALTER TABLE messages
  ADD COLUMN speaker text,
  ADD COLUMN position bigint,
  ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    CASE WHEN role IN ('user', 'assistant') AND btrim(content) <> '' THEN to_tsvector('english', content) END
  ) STORED;

UPDATE messages g SET position = numbered.n
FROM (
  SELECT id, row_number() OVER (PARTITION BY conversation_id ORDER BY id) AS n
  FROM messages WHERE search_vector IS NOT NULL
) numbered
WHERE numbered.id = g.id;
CREATE INDEX messages_search_idx ON messages USING gin (search_vector);
CREATE INDEX messages_user_idx ON messages (user_id, id);
CREATE INDEX messages_conversation_position_idx ON messages (conversation_id, position) WHERE position IS NOT NULL;

CREATE FUNCTION message_position_before_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.role IN ('user', 'assistant') AND btrim(NEW.content) <> '' THEN
    NEW.position := COALESCE(
      (SELECT g.position FROM messages g
       WHERE g.conversation_id = NEW.conversation_id AND g.position IS NOT NULL
       ORDER BY g.position DESC LIMIT 1),
      0) + 1;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER message_position_insert BEFORE INSERT ON messages
  FOR EACH ROW EXECUTE FUNCTION message_position_before_insert();
CREATE INDEX messages_user_speaker_idx ON messages (user_id, lower(speaker)) WHERE speaker IS NOT NULL;

-- Per-user term statistics of searchable messages, as memory_term_stats is for memories (0090):
-- kept by statement-level triggers, so every write path keeps them exact.
CREATE TABLE message_term_stats (
  user_id text NOT NULL,
  term text NOT NULL,
  doc_count integer NOT NULL,
  PRIMARY KEY (user_id, term)
);

CREATE TABLE message_user_stats (
  user_id text PRIMARY KEY,
  doc_count integer NOT NULL,
  total_length bigint NOT NULL
);

CREATE FUNCTION message_stats_change(changed_user text, changed_vector tsvector, sign int) RETURNS void
  LANGUAGE sql AS $$
  INSERT INTO message_term_stats AS s (user_id, term, doc_count)
  SELECT changed_user, t.lexeme, sign FROM unnest(changed_vector) t ORDER BY t.lexeme
  ON CONFLICT (user_id, term) DO UPDATE SET doc_count = s.doc_count + EXCLUDED.doc_count;
  INSERT INTO message_user_stats AS s (user_id, doc_count, total_length)
  VALUES (changed_user, sign, sign * length(changed_vector))
  ON CONFLICT (user_id) DO UPDATE SET
    doc_count = s.doc_count + EXCLUDED.doc_count,
    total_length = s.total_length + EXCLUDED.total_length;
$$;

CREATE FUNCTION message_stats_after_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  WITH terms AS (
    SELECT n.user_id, t.lexeme AS term, count(*)::int AS delta
    FROM new_rows n, unnest(n.search_vector) t
    WHERE n.search_vector IS NOT NULL
    GROUP BY n.user_id, t.lexeme
  )
  INSERT INTO message_term_stats AS s (user_id, term, doc_count)
  SELECT user_id, term, delta FROM terms ORDER BY user_id, term
  ON CONFLICT (user_id, term) DO UPDATE SET doc_count = s.doc_count + EXCLUDED.doc_count;

  INSERT INTO message_user_stats AS s (user_id, doc_count, total_length)
  SELECT n.user_id, count(*), sum(length(n.search_vector))
  FROM new_rows n WHERE n.search_vector IS NOT NULL
  GROUP BY n.user_id ORDER BY n.user_id
  ON CONFLICT (user_id) DO UPDATE SET
    doc_count = s.doc_count + EXCLUDED.doc_count,
    total_length = s.total_length + EXCLUDED.total_length;
  RETURN NULL;
END $$;

CREATE FUNCTION message_stats_after_delete() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  WITH terms AS (
    SELECT o.user_id, t.lexeme AS term, count(*)::int AS delta
    FROM old_rows o, unnest(o.search_vector) t
    WHERE o.search_vector IS NOT NULL
    GROUP BY o.user_id, t.lexeme
    ORDER BY o.user_id, t.lexeme
  )
  UPDATE message_term_stats s SET doc_count = s.doc_count - terms.delta
  FROM terms WHERE s.user_id = terms.user_id AND s.term = terms.term;

  UPDATE message_user_stats s SET
    doc_count = s.doc_count - d.docs,
    total_length = s.total_length - d.length
  FROM (
    SELECT o.user_id, count(*) AS docs, sum(length(o.search_vector)) AS length
    FROM old_rows o WHERE o.search_vector IS NOT NULL GROUP BY o.user_id
  ) d
  WHERE s.user_id = d.user_id;
  RETURN NULL;
END $$;

-- Only rows whose user or searchable text changed fire it (setting turn_id or context does not).
CREATE FUNCTION message_stats_after_update() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.search_vector IS NOT NULL THEN PERFORM message_stats_change(OLD.user_id, OLD.search_vector, -1); END IF;
  IF NEW.search_vector IS NOT NULL THEN PERFORM message_stats_change(NEW.user_id, NEW.search_vector, 1); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER message_stats_insert AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION message_stats_after_insert();
CREATE TRIGGER message_stats_update AFTER UPDATE ON messages
  FOR EACH ROW
  WHEN (OLD.user_id <> NEW.user_id OR OLD.search_vector IS DISTINCT FROM NEW.search_vector)
  EXECUTE FUNCTION message_stats_after_update();
CREATE TRIGGER message_stats_delete AFTER DELETE ON messages
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION message_stats_after_delete();

-- The statistics of the messages stored before this migration.
INSERT INTO message_term_stats (user_id, term, doc_count)
SELECT m.user_id, t.lexeme, count(*)
FROM messages m, unnest(m.search_vector) t
WHERE m.search_vector IS NOT NULL
GROUP BY m.user_id, t.lexeme;
INSERT INTO message_user_stats (user_id, doc_count, total_length)
SELECT m.user_id, count(*), sum(length(m.search_vector))
FROM messages m WHERE m.search_vector IS NOT NULL
GROUP BY m.user_id;
