-- Versioned conversation summaries: every compaction writes a new version; the current one
-- is also kept on the conversation, with the last message it covers.
ALTER TABLE conversations ADD COLUMN summary_through_message_id bigint NOT NULL DEFAULT 0;

CREATE TABLE conversation_summaries (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  conversation_id text NOT NULL REFERENCES conversations (id),
  version integer NOT NULL,
  summary text NOT NULL,
  token_count integer NOT NULL,
  model text,
  through_message_id bigint NOT NULL,
  topic_changed boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (conversation_id, version)
);
