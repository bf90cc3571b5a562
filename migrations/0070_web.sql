-- The dashboard's login: sessions (a cookie holds the id; only its SHA-256 hash is stored) and
-- one-time login links printed by `steward start` / `steward dashboard` (hash only, 10 minutes).
CREATE TABLE web_sessions (
  id_hash text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  owner boolean NOT NULL DEFAULT false,
  csrf text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX web_sessions_expiry_idx ON web_sessions (expires_at);

CREATE TABLE web_login_codes (
  code_hash text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  owner boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

-- The dashboard lists recent turns, everyone's (the owner) or one user's.
CREATE INDEX turns_recent_idx ON turns (queued_at DESC);
CREATE INDEX turns_user_recent_idx ON turns (user_id, queued_at DESC);
