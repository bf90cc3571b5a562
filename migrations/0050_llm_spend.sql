-- Per-user daily spend (the spend caps, `steward usage`) reads llm_calls by user and time.
CREATE INDEX llm_calls_user_created_idx ON llm_calls (user_id, created_at);
CREATE INDEX llm_calls_created_idx ON llm_calls (created_at);
