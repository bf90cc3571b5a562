-- A conversation's turns in order. Every turn reads the conversation's latest ended turn
-- (status NOT IN ('queued', 'running') ORDER BY seq DESC LIMIT 1): with this index that is the
-- first such entry walking it backwards, where before it sorted all the conversation's turns
-- (a cost that grew with the conversation).
CREATE INDEX turns_conversation_seq_idx ON turns (conversation_id, seq);

-- Superseded, and each one more index to write on every turn's insert and status change:
-- (conversation_id, started_at) has no reader left but the conversations cascade, which the new
-- index serves; (status) served the sweep of open turns, which turns_open_idx (0006, partial on
-- queued and running) serves.
DROP INDEX turns_conversation_idx;
DROP INDEX turns_status_idx;
