-- Per-user API tokens: only a SHA-256 hash of each token is stored. A user token acts only as
-- its user; the owner's token (STEWARD_API_TOKEN) may act as anyone.
CREATE TABLE api_tokens (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  token_hash text NOT NULL UNIQUE,
  name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);
