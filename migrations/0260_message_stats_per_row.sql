-- Message term statistics (0140) kept by a row-level trigger on insert instead of a
-- statement-level one: a turn stores its messages one statement each, and the statement-level
-- trigger materialized a transition table and grouped it for every insert (tool results
-- included, which have no search vector). Per row, and only for searchable rows (WHEN), an
-- insert costs about a third less on the embedded database. A bulk insert (an import) now pays
-- per row: about 0.3 instead of 0.17 ms a message.
--
-- Every writer of a user's statistics now takes that user's `message_user_stats` row first and
-- the term rows after it, sorted: writers of one user's statistics queue on that one row and
-- never hold term rows another is waiting for (no deadlock between an import, a turn, a
-- deletion and an edit of the same user's messages on a server).
DROP TRIGGER message_stats_insert ON messages;
DROP FUNCTION message_stats_after_insert();

CREATE OR REPLACE FUNCTION message_stats_change(changed_user text, changed_vector tsvector, sign int) RETURNS void
  LANGUAGE sql AS $$
  INSERT INTO message_user_stats AS s (user_id, doc_count, total_length)
  VALUES (changed_user, sign, sign * length(changed_vector))
  ON CONFLICT (user_id) DO UPDATE SET
    doc_count = s.doc_count + EXCLUDED.doc_count,
    total_length = s.total_length + EXCLUDED.total_length;
  INSERT INTO message_term_stats AS s (user_id, term, doc_count)
  SELECT changed_user, t.lexeme, sign FROM unnest(changed_vector) t ORDER BY t.lexeme
  ON CONFLICT (user_id, term) DO UPDATE SET doc_count = s.doc_count + EXCLUDED.doc_count;
$$;

-- The body of message_stats_change(NEW.user_id, NEW.search_vector, 1), written out: a plpgsql
-- trigger runs its own statements a little faster than it calls a SQL function.
CREATE FUNCTION message_stats_after_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_user_stats AS s (user_id, doc_count, total_length)
  VALUES (NEW.user_id, 1, length(NEW.search_vector))
  ON CONFLICT (user_id) DO UPDATE SET
    doc_count = s.doc_count + 1,
    total_length = s.total_length + EXCLUDED.total_length;
  INSERT INTO message_term_stats AS s (user_id, term, doc_count)
  SELECT NEW.user_id, t.lexeme, 1 FROM unnest(NEW.search_vector) t ORDER BY t.lexeme
  ON CONFLICT (user_id, term) DO UPDATE SET doc_count = s.doc_count + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER message_stats_insert AFTER INSERT ON messages
  FOR EACH ROW WHEN (NEW.search_vector IS NOT NULL)
  EXECUTE FUNCTION message_stats_after_insert();

-- A deletion's trigger (0140) takes the term rows and then the totals: before it, this one takes
-- the deleted messages' users' totals rows, sorted (triggers of one event fire in name order:
-- `message_stats_begin_delete` before `message_stats_delete`).
CREATE FUNCTION message_stats_lock_users() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM message_user_stats
  WHERE user_id IN (SELECT o.user_id FROM old_rows o WHERE o.search_vector IS NOT NULL)
  ORDER BY user_id FOR UPDATE;
  RETURN NULL;
END $$;

CREATE TRIGGER message_stats_begin_delete AFTER DELETE ON messages
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION message_stats_lock_users();
