-- Deliveries (owned by channels/): every message deliver() sends outside a reply — scheduled
-- runs, reminders, alerts — with where it went and whether it arrived, settled from the
-- outbox's own outcome (never at enqueue time). `attempts` lists each channel tried, in order:
-- [{channel, chat_id, status, error, at}]. A delivery no channel took waits in the dashboard
-- inbox (`inbox_messages`) until its user reads it.
CREATE TABLE deliveries (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  source text NOT NULL,
  text text NOT NULL,
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'delivered', 'failed', 'ambiguous')),
  -- Where it is being sent, or where it ended: a channel, 'conversation' or 'inbox'.
  channel text,
  chat_id text,
  attempts jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  settled_at timestamptz
);
CREATE INDEX deliveries_user_idx ON deliveries (user_id, created_at DESC);

ALTER TABLE outbox_messages ADD COLUMN delivery_id text;
CREATE INDEX outbox_messages_delivery_idx ON outbox_messages (delivery_id) WHERE delivery_id IS NOT NULL;

CREATE TABLE inbox_messages (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  user_id text NOT NULL REFERENCES users (id),
  delivery_id text REFERENCES deliveries (id),
  text text NOT NULL,
  -- Why it is here ("not delivered: telegram refused it (…)").
  note text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  read_at timestamptz
);
CREATE INDEX inbox_messages_user_idx ON inbox_messages (user_id, id DESC);
