-- Voice: voice notes arrive as inbound messages of kind 'voice' (the platform's file reference in
-- `media`, the transcript once made); replies may carry audio in the outbox; the web voice
-- endpoint's spoken replies wait in voice_clips to be fetched once; each user's reply preference.
ALTER TABLE inbound_messages DROP CONSTRAINT inbound_messages_kind_check;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_kind_check
  CHECK (kind IN ('text', 'command', 'unsupported', 'voice'));
ALTER TABLE inbound_messages ADD COLUMN media jsonb;
ALTER TABLE inbound_messages ADD COLUMN transcript text;

ALTER TABLE outbox_messages ADD COLUMN audio bytea;
ALTER TABLE outbox_messages ADD COLUMN audio_type text;

CREATE TABLE voice_clips (
  id text PRIMARY KEY,
  user_id text NOT NULL,
  content_type text NOT NULL,
  audio bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX voice_clips_expires_idx ON voice_clips (expires_at);

-- Owned by users/: 'auto' (voice to voice), 'text' (always text) or 'voice' (always voice).
ALTER TABLE users ADD COLUMN voice_replies text NOT NULL DEFAULT 'auto'
  CHECK (voice_replies IN ('auto', 'text', 'voice'));
