-- Integrations: per-user connected accounts (credentials encrypted with AES-256-GCM), the
-- embedded local calendar and its secret ICS feed tokens.
CREATE TABLE integration_accounts (
  user_id text NOT NULL REFERENCES users (id),
  provider text NOT NULL CHECK (provider IN ('google', 'email', 'hubspot', 'caldav')),
  -- What the user sees: an address, a portal, a server host. Never a secret.
  account text NOT NULL,
  -- Fingerprint of the key that sealed `sealed`, so a changed key is reported, not misread.
  key_id text NOT NULL,
  -- base64(iv ‖ auth tag ‖ ciphertext) of the JSON credentials; AAD binds it to user and provider.
  sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, provider)
);

CREATE TABLE calendar_events (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  title text NOT NULL CHECK (btrim(title) <> ''),
  description text,
  location text,
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL CHECK (ends_at >= starts_at),
  -- The zone the event was written in: recurrences expand in it (DST-correct), the feed uses it.
  timezone text NOT NULL,
  rrule text,
  attendees jsonb NOT NULL DEFAULT '[]',
  -- calendar.delete cancels: the row stays, hidden from lists, and the feed drops it.
  status text NOT NULL DEFAULT 'confirmed' CHECK (status IN ('confirmed', 'cancelled')),
  sequence integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX calendar_events_user_start_idx ON calendar_events (user_id, starts_at);

CREATE TABLE calendar_feeds (
  user_id text PRIMARY KEY REFERENCES users (id),
  token text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
