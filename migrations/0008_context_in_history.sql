-- The per-turn context a user message was sent with (time, memories) is kept with it, so that
-- later requests repeat the conversation exactly as it was sent: the prompt only grows at its
-- end between compaction points, and each request reads the previous one from the cache.
ALTER TABLE messages ADD COLUMN context text;
-- Memory extraction runs after every turn; folding into the summary only when history must
-- shrink. Each keeps its own place in the conversation.
ALTER TABLE conversations ADD COLUMN memory_through_message_id bigint NOT NULL DEFAULT 0;
UPDATE conversations SET memory_through_message_id = summary_through_message_id;
