-- Scheduled workflows. A schedule is a skill file's `schedule` + `timezone`, owned by a user;
-- `workflow_schedules` remembers since when each one is known (runs missed while Steward was
-- down are found from there), `workflow_runs` records every scheduled time once: the unique key
-- is what makes a scheduled time run exactly once across restarts and instances.
CREATE TABLE workflow_schedules (
  user_id text NOT NULL REFERENCES users (id),
  skill text NOT NULL,
  cron text NOT NULL,
  timezone text NOT NULL,
  since timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, skill)
);

CREATE TABLE workflow_runs (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  skill text NOT NULL,
  scheduled_for timestamptz NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'catch_up', 'manual')),
  status text NOT NULL
    CHECK (status IN ('running', 'ok', 'failed', 'missed', 'delivery_failed')),
  started_at timestamptz,
  finished_at timestamptz,
  turn_id text,
  cost_usd numeric NOT NULL DEFAULT 0,
  error text,
  -- The job that runs it: a retry of the same job finds its own interrupted run.
  job_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, skill, scheduled_for)
);
CREATE INDEX workflow_runs_latest_idx ON workflow_runs (user_id, skill, scheduled_for DESC);
