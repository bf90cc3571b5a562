-- Turns are queued before they run: the request is stored (and de-duplicated by channel message
-- id) the moment it arrives, and its user message joins the conversation only when its turn
-- starts, under the conversation lock — so history is always whole turns in order. `owner` is
-- the instance that queued or runs the turn; a turn whose owner is gone is recovered by the next
-- instance that takes the conversation (or by the periodic sweep).
ALTER TABLE turns DROP CONSTRAINT turns_status_check;
ALTER TABLE turns ADD CONSTRAINT turns_status_check
  CHECK (status IN ('queued', 'running', 'completed', 'paused', 'interrupted', 'failed'));
ALTER TABLE turns ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE turns ADD COLUMN request text;
ALTER TABLE turns ADD COLUMN channel text;
ALTER TABLE turns ADD COLUMN channel_message_id text;
ALTER TABLE turns ADD COLUMN owner text;
ALTER TABLE turns ADD COLUMN queued_at timestamptz NOT NULL DEFAULT now();
CREATE UNIQUE INDEX turns_channel_message_key ON turns (channel, channel_message_id)
  WHERE channel_message_id IS NOT NULL;
CREATE INDEX turns_open_idx ON turns (conversation_id, seq) WHERE status IN ('queued', 'running');
CREATE INDEX turns_user_message_idx ON turns (user_message_id);
UPDATE turns SET request = m.content FROM messages m WHERE m.id = turns.user_message_id AND turns.request IS NULL;
UPDATE turns SET request = '' WHERE request IS NULL;
ALTER TABLE turns ALTER COLUMN request SET NOT NULL;
