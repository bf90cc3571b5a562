-- The ledger of learned skills (src/skills/learned/): every version of every skill written by
-- skills.write, changed by skills.update, retired, rolled back, or found edited by hand, kept
-- forever. Versions of one owner's skill count from 1; a rollback is a new version holding an
-- older one's page, so the history only grows.
CREATE TABLE skill_versions (
  -- The skill's owner: the user whose data the history is (export and forget cover it).
  user_id text NOT NULL,
  name text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  change text NOT NULL CHECK (change IN ('write', 'update', 'retire', 'rollback', 'outside_edit')),
  -- 'steward' when an agent made the change, the user's id for their own command, 'unknown' for
  -- an edit found on disk.
  author text NOT NULL,
  reason text NOT NULL,
  -- The whole page (frontmatter and body) as of this version, and the diff from the previous one.
  content text NOT NULL,
  diff text NOT NULL,
  turn_id text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, name, version)
);
CREATE INDEX skill_versions_name_idx ON skill_versions (name);
