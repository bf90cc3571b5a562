-- Long-term memory: entries searched by full text (and by vector where pgvector exists, see
-- 0004_memory.vector.sql) and the entity graph built from them. Memories are never deleted:
-- the lifecycle job decays importance and sets archived_at.

-- array_to_string is only STABLE (element output functions could vary); for text[] it is
-- immutable, which a generated column needs.
CREATE FUNCTION memory_tags_text(tags text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT array_to_string(tags, ' ') $$;

CREATE TABLE memory_entries (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  content text NOT NULL CHECK (btrim(content) <> ''),
  tags text[] NOT NULL DEFAULT '{}',
  category text NOT NULL
    CHECK (category IN ('preference', 'fact', 'decision', 'goal', 'relationship', 'context', 'instruction')),
  importance real NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
  source_type text NOT NULL DEFAULT 'user' CHECK (source_type IN ('user', 'compaction', 'agent', 'import')),
  source_conversation_id text,
  -- sha256 of the normalized content: spots identical saves and stale embeddings.
  content_hash text NOT NULL,
  embedding_model text,
  -- NULL until the embed job has embedded the current content (cleared when content changes).
  embedded_at timestamptz,
  accessed_at timestamptz NOT NULL DEFAULT now(),
  -- When importance last had decay applied; decay runs from greatest(accessed_at, decayed_at).
  decayed_at timestamptz,
  archived_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', content), 'A') ||
    setweight(to_tsvector('english', memory_tags_text(tags)), 'B')
  ) STORED
);
CREATE INDEX memory_entries_user_category_idx ON memory_entries (user_id, category);
CREATE INDEX memory_entries_user_archived_idx ON memory_entries (user_id, archived_at);
CREATE INDEX memory_entries_search_idx ON memory_entries USING gin (search_vector);
CREATE INDEX memory_entries_tags_idx ON memory_entries USING gin (tags);
CREATE INDEX memory_entries_unembedded_idx ON memory_entries (created_at)
  WHERE embedded_at IS NULL AND archived_at IS NULL;

CREATE TABLE entities (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  name text NOT NULL CHECK (btrim(name) <> ''),
  kind text NOT NULL DEFAULT 'other'
    CHECK (kind IN ('person', 'organization', 'project', 'place', 'topic', 'other')),
  normalized_name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, normalized_name, kind)
);

CREATE TABLE entity_relations (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  user_id text NOT NULL REFERENCES users (id),
  source_entity_id text NOT NULL REFERENCES entities (id),
  target_entity_id text NOT NULL REFERENCES entities (id),
  relation text NOT NULL CHECK (btrim(relation) <> ''),
  -- The memory the relation was first learnt from.
  memory_id text REFERENCES memory_entries (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_entity_id, target_entity_id, relation),
  CHECK (source_entity_id <> target_entity_id)
);
CREATE INDEX entity_relations_target_idx ON entity_relations (target_entity_id);

CREATE TABLE entity_mentions (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  user_id text NOT NULL REFERENCES users (id),
  entity_id text NOT NULL REFERENCES entities (id),
  memory_id text REFERENCES memory_entries (id),
  conversation_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (entity_id, memory_id)
);
CREATE INDEX entity_mentions_memory_idx ON entity_mentions (memory_id);
