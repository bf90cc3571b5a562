-- One reminder per task and due date: the primary key makes it exactly once across instances.
CREATE TABLE task_reminders (
  task_id text NOT NULL,
  due_date date NOT NULL,
  user_id text NOT NULL REFERENCES users (id),
  sent_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, due_date)
);
