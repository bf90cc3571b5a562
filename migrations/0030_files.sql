-- Files: the journal of vault operations (crash recovery), the content index (full text over
-- every user's files and the skill pages) and the state of Drive sync. Nothing here holds a
-- file's only copy: files live in the vault folder, their versions in its archive.

-- One row per file operation, written before the operation touches anything. A row still
-- 'pending' after a crash is completed or rolled back by the next start (or the next
-- operation on that user's files).
CREATE TABLE file_operations (
  id text PRIMARY KEY,
  user_id text NOT NULL,
  store text NOT NULL CHECK (store IN ('local', 'drive')),
  operation text NOT NULL CHECK (operation IN ('write', 'delete', 'move', 'restore')),
  path text NOT NULL,
  -- move: the destination
  target text,
  -- the archive version name the operation files the replaced or deleted version under
  archive_name text,
  -- sha256 of the new content (write, restore): tells a finished replace from one never started
  content_hash text,
  details jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'rolled_back')),
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX file_operations_pending_idx ON file_operations (user_id, store) WHERE status = 'pending';

-- user_id '' holds shared rows (the skill pages); a user's files are only ever searched with
-- that user's id.
CREATE TABLE content_index (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  user_id text NOT NULL,
  source text NOT NULL CHECK (source IN ('vault', 'skill')),
  path text NOT NULL,
  kind text NOT NULL,
  title text NOT NULL DEFAULT '',
  headings text NOT NULL DEFAULT '',
  body text NOT NULL DEFAULT '',
  size bigint NOT NULL DEFAULT 0,
  -- inode, modification time (ns) and size when indexed: any rewrite changes it
  change_token text NOT NULL DEFAULT '',
  content_hash text NOT NULL DEFAULT '',
  -- why the contents are not indexed (too large, unreadable); the name still is
  note text,
  indexed_at timestamptz NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') ||
    setweight(to_tsvector('english', headings), 'B') ||
    setweight(to_tsvector('english', body), 'C')
  ) STORED,
  UNIQUE (user_id, source, path)
);
CREATE INDEX content_index_search_idx ON content_index USING gin (search_vector);

-- The last synced state of each file of a user's Drive folder: what both sides looked like
-- then, so a sync can tell who changed what.
CREATE TABLE drive_sync_files (
  user_id text NOT NULL,
  path text NOT NULL,
  drive_file_id text NOT NULL,
  mime_type text NOT NULL,
  -- the Drive file's version counter when last synced
  remote_version text NOT NULL,
  -- sha256 of the vault file when last synced
  local_hash text NOT NULL,
  -- set while both sides changed: the Drive side sits in conflict_path until the user chooses
  conflict_path text,
  synced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, path)
);
CREATE UNIQUE INDEX drive_sync_files_drive_id_idx ON drive_sync_files (user_id, drive_file_id);
