-- Channels: inbound messages stored before a webhook is acknowledged, the outbox of replies,
-- pairing codes for unknown senders, and rejected webhooks (for the operator view).
CREATE TABLE inbound_messages (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  channel text NOT NULL,
  channel_message_id text NOT NULL,
  chat_id text NOT NULL,
  sender_id text NOT NULL,
  sender_name text,
  kind text NOT NULL CHECK (kind IN ('text', 'command', 'unsupported')),
  text text NOT NULL DEFAULT '',
  meta jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'received'
    CHECK (status IN ('received', 'processing', 'done', 'pairing', 'failed')),
  user_id text,
  attempts integer NOT NULL DEFAULT 0,
  error text,
  received_at timestamptz NOT NULL DEFAULT now(),
  processed_at timestamptz
);
CREATE UNIQUE INDEX inbound_messages_channel_message_key ON inbound_messages (channel, channel_message_id);
CREATE INDEX inbound_messages_open_idx ON inbound_messages (channel, chat_id, id)
  WHERE status IN ('received', 'processing');

CREATE TABLE outbox_messages (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  dedupe_key text NOT NULL,
  channel text NOT NULL,
  chat_id text NOT NULL,
  meta jsonb NOT NULL DEFAULT '{}',
  user_id text,
  inbound_id bigint,
  text text NOT NULL,
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'sending', 'sent', 'ambiguous', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  platform_message_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
CREATE UNIQUE INDEX outbox_messages_dedupe_key ON outbox_messages (dedupe_key);
CREATE INDEX outbox_messages_open_idx ON outbox_messages (channel, chat_id, id)
  WHERE status IN ('pending', 'sending');

CREATE TABLE pairing_codes (
  code text PRIMARY KEY,
  channel text NOT NULL,
  sender_id text NOT NULL,
  sender_name text,
  chat_id text NOT NULL,
  meta jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved')),
  user_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  approved_at timestamptz
);
CREATE INDEX pairing_codes_sender_idx ON pairing_codes (channel, sender_id, created_at);

CREATE TABLE webhook_rejections (
  channel text NOT NULL,
  reason text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  last_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (channel, reason)
);

-- Identities (owned by users/): where each identity was last heard from, for deliver().
ALTER TABLE channel_identities ADD COLUMN display_name text;
ALTER TABLE channel_identities ADD COLUMN direct_chat_id text;
ALTER TABLE channel_identities ADD COLUMN last_inbound_at timestamptz;
ALTER TABLE users ADD COLUMN primary_channel text;
