-- Per-skill circuit breakers (state survives restarts) and the sentinel's decisions.
CREATE TABLE skill_circuit_breakers (
  skill text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('closed', 'open', 'half_open')),
  consecutive_failures integer NOT NULL DEFAULT 0,
  opened_at timestamptz,
  last_error text,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sentinel_decisions (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  execution_id text,
  turn_id text,
  user_id text NOT NULL,
  skill text NOT NULL,
  command text NOT NULL,
  mission text,
  original_request text,
  approved boolean NOT NULL,
  reasoning text NOT NULL,
  model text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sentinel_decisions_turn_idx ON sentinel_decisions (turn_id);
