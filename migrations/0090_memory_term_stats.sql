-- Per-user term statistics for BM25 ranking of memory search (src/memory/store/search-memories.ts).
--
-- memory_term_stats: for each user and each lexeme of search_vector, how many of the user's
-- live (not archived) memories contain it. memory_user_stats: how many live memories the user
-- has and the sum of their lengths (lexemes in search_vector), for the average length.
--
-- Kept by statement-level triggers on memory_entries, so every write path (saves, merges,
-- archiving, deletes, bulk loads) keeps them exact in the same transaction. Only rows whose
-- user, search_vector or liveness changed count: touching accessed_at or decaying importance
-- changes nothing here. Terms of one user never count for another.
CREATE TABLE memory_term_stats (
  user_id text NOT NULL,
  term text NOT NULL,
  doc_count integer NOT NULL,
  PRIMARY KEY (user_id, term)
);

CREATE TABLE memory_user_stats (
  user_id text PRIMARY KEY,
  doc_count integer NOT NULL,
  total_length bigint NOT NULL
);

-- Upserts run in (user_id, term) order so that concurrent writers lock rows in the same order.
-- A term whose count falls to 0 keeps its row (a df of 0 is what it means); rows are few per user.
CREATE FUNCTION memory_stats_after_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT n.user_id, n.search_vector, 1 AS sign FROM new_rows n WHERE n.archived_at IS NULL
  ), terms AS (
    SELECT c.user_id, t.lexeme AS term, sum(c.sign)::int AS delta
    FROM changed c, unnest(c.search_vector) t
    GROUP BY c.user_id, t.lexeme
  )
  INSERT INTO memory_term_stats AS s (user_id, term, doc_count)
  SELECT user_id, term, delta FROM terms ORDER BY user_id, term
  ON CONFLICT (user_id, term) DO UPDATE SET doc_count = s.doc_count + EXCLUDED.doc_count;

  INSERT INTO memory_user_stats AS s (user_id, doc_count, total_length)
  SELECT n.user_id, count(*), sum(length(n.search_vector))
  FROM new_rows n WHERE n.archived_at IS NULL
  GROUP BY n.user_id ORDER BY n.user_id
  ON CONFLICT (user_id) DO UPDATE SET
    doc_count = s.doc_count + EXCLUDED.doc_count,
    total_length = s.total_length + EXCLUDED.total_length;
  RETURN NULL;
END $$;

CREATE FUNCTION memory_stats_after_delete() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT o.user_id, o.search_vector FROM old_rows o WHERE o.archived_at IS NULL
  ), terms AS (
    SELECT c.user_id, t.lexeme AS term, count(*)::int AS delta
    FROM changed c, unnest(c.search_vector) t
    GROUP BY c.user_id, t.lexeme
    ORDER BY c.user_id, t.lexeme
  )
  UPDATE memory_term_stats s SET doc_count = s.doc_count - terms.delta
  FROM terms WHERE s.user_id = terms.user_id AND s.term = terms.term;

  UPDATE memory_user_stats s SET
    doc_count = s.doc_count - d.docs,
    total_length = s.total_length - d.length
  FROM (
    SELECT o.user_id, count(*) AS docs, sum(length(o.search_vector)) AS length
    FROM old_rows o WHERE o.archived_at IS NULL GROUP BY o.user_id
  ) d
  WHERE s.user_id = d.user_id;

  RETURN NULL;
END $$;

-- Updates are per row, and only rows whose user, search_vector or liveness changed fire it
-- (the trigger's WHEN): touching accessed_at or decaying importance costs nothing here.
CREATE FUNCTION memory_stats_after_update() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT OLD.user_id AS user_id, OLD.search_vector AS search_vector, -1 AS sign WHERE OLD.archived_at IS NULL
    UNION ALL
    SELECT NEW.user_id, NEW.search_vector, 1 WHERE NEW.archived_at IS NULL
  ), terms AS (
    SELECT c.user_id, t.lexeme AS term, sum(c.sign)::int AS delta
    FROM changed c, unnest(c.search_vector) t
    GROUP BY c.user_id, t.lexeme
    HAVING sum(c.sign) <> 0
  ), term_upsert AS (
    -- A data-modifying CTE always runs to completion, whether or not it is read.
    INSERT INTO memory_term_stats AS s (user_id, term, doc_count)
    SELECT user_id, term, delta FROM terms ORDER BY user_id, term
    ON CONFLICT (user_id, term) DO UPDATE SET doc_count = s.doc_count + EXCLUDED.doc_count
  )
  INSERT INTO memory_user_stats AS s (user_id, doc_count, total_length)
  SELECT c.user_id, sum(c.sign), sum(c.sign * length(c.search_vector))
  FROM changed c
  GROUP BY c.user_id ORDER BY c.user_id
  ON CONFLICT (user_id) DO UPDATE SET
    doc_count = s.doc_count + EXCLUDED.doc_count,
    total_length = s.total_length + EXCLUDED.total_length;
  RETURN NULL;
END $$;

CREATE TRIGGER memory_stats_insert AFTER INSERT ON memory_entries
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memory_stats_after_insert();
CREATE TRIGGER memory_stats_update AFTER UPDATE ON memory_entries
  FOR EACH ROW
  WHEN ((OLD.archived_at IS NULL) <> (NEW.archived_at IS NULL)
    OR OLD.user_id <> NEW.user_id OR OLD.search_vector <> NEW.search_vector)
  EXECUTE FUNCTION memory_stats_after_update();
CREATE TRIGGER memory_stats_delete AFTER DELETE ON memory_entries
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION memory_stats_after_delete();

-- The statistics of the memories saved before this migration.
INSERT INTO memory_term_stats (user_id, term, doc_count)
SELECT m.user_id, t.lexeme, count(*)
FROM memory_entries m, unnest(m.search_vector) t
WHERE m.archived_at IS NULL
GROUP BY m.user_id, t.lexeme;
INSERT INTO memory_user_stats (user_id, doc_count, total_length)
SELECT m.user_id, count(*), sum(length(m.search_vector))
FROM memory_entries m WHERE m.archived_at IS NULL
GROUP BY m.user_id;
