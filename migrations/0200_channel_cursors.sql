-- Where a channel that reaches out (rather than receiving webhooks) has got to: Matrix's /sync
-- `since` token, Discord's Gateway session (id, resume URL, last stored sequence), one-off
-- notes such as "the encrypted-room notice was sent in this room". Saved only after the
-- events before it were stored, so a restart neither replays nor skips them.
CREATE TABLE channel_cursors (
  channel text NOT NULL,
  name text NOT NULL,
  value text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (channel, name)
);
