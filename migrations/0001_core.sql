-- Core tables: users, channel identities, conversations, turns, messages, skill executions, LLM calls.
CREATE TABLE users (
  id text PRIMARY KEY,
  display_name text,
  timezone text NOT NULL DEFAULT 'UTC',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE channel_identities (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  user_id text NOT NULL REFERENCES users (id),
  channel text NOT NULL,
  external_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX channel_identities_channel_external_key ON channel_identities (channel, external_id);

CREATE TABLE conversations (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  channel text NOT NULL,
  mode text,
  title text,
  summary text NOT NULL DEFAULT '',
  summary_version integer NOT NULL DEFAULT 0,
  summary_model text,
  summary_updated_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_user_idx ON conversations (user_id, updated_at);

CREATE TABLE turns (
  id text PRIMARY KEY,
  conversation_id text NOT NULL REFERENCES conversations (id),
  user_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'completed', 'paused', 'interrupted', 'failed')),
  mode text NOT NULL,
  user_message_id bigint,
  reply text,
  stop_reason text,
  error text,
  state jsonb,
  prompt_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  cache_write_tokens integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cost double precision NOT NULL DEFAULT 0,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX turns_conversation_idx ON turns (conversation_id, started_at);
CREATE INDEX turns_status_idx ON turns (status);

CREATE TABLE messages (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  conversation_id text NOT NULL REFERENCES conversations (id),
  user_id text NOT NULL,
  turn_id text,
  role text NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
  content text NOT NULL DEFAULT '',
  tool_calls jsonb,
  tool_call_id text,
  token_count integer NOT NULL DEFAULT 0,
  channel text,
  channel_message_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_conversation_idx ON messages (conversation_id, id);
CREATE UNIQUE INDEX messages_channel_message_key ON messages (channel, channel_message_id)
  WHERE channel_message_id IS NOT NULL;

CREATE TABLE skill_executions (
  id text PRIMARY KEY,
  parent_id text,
  turn_id text,
  user_id text NOT NULL,
  conversation_id text,
  kind text NOT NULL CHECK (kind IN ('agent', 'skill')),
  agent_id text,
  mission text,
  skill text,
  command text,
  flags jsonb,
  depends_on jsonb,
  status text NOT NULL,
  result text,
  error text,
  transcript jsonb,
  usage jsonb,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  duration_ms integer
);
CREATE INDEX skill_executions_turn_idx ON skill_executions (turn_id);
CREATE INDEX skill_executions_parent_idx ON skill_executions (parent_id);

CREATE TABLE llm_calls (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  turn_id text,
  execution_id text,
  conversation_id text,
  user_id text,
  role text NOT NULL,
  model text NOT NULL,
  prompt_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  cache_write_tokens integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cost double precision NOT NULL DEFAULT 0,
  latency_ms integer NOT NULL DEFAULT 0,
  error_class text,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX llm_calls_turn_idx ON llm_calls (turn_id);

INSERT INTO users (id, display_name) VALUES ('local', 'Local user');
