-- Skills turned off for one user (on the dashboard's Skills page): the executor refuses them
-- for that user, whoever calls (an agent, a workflow, `steward run`). A skill is on unless listed.
CREATE TABLE disabled_skills (
  user_id text NOT NULL REFERENCES users (id),
  skill text NOT NULL,
  disabled_by text NOT NULL,
  disabled_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, skill)
);
