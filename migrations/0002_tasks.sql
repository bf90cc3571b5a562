-- Task manager: tasks, their dependencies, comments and an audit trail of every change.
-- Tasks are never deleted: tasks.delete sets archived_at.
CREATE TABLE tasks (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  title text NOT NULL CHECK (btrim(title) <> ''),
  description text,
  status text NOT NULL DEFAULT 'todo'
    CHECK (status IN ('todo', 'in_progress', 'blocked', 'done', 'cancelled')),
  priority text NOT NULL DEFAULT 'medium' CHECK (priority IN ('critical', 'high', 'medium', 'low')),
  due_date date,
  assignee text,
  tags text[] NOT NULL DEFAULT '{}',
  parent_id text REFERENCES tasks (id),
  recurrence text,
  archived_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') ||
    setweight(to_tsvector('english', coalesce(description, '')), 'B')
  ) STORED
);
CREATE INDEX tasks_user_status_idx ON tasks (user_id, status);
CREATE INDEX tasks_user_due_date_idx ON tasks (user_id, due_date);
CREATE INDEX tasks_user_updated_idx ON tasks (user_id, updated_at);
CREATE INDEX tasks_parent_idx ON tasks (parent_id);
CREATE INDEX tasks_search_idx ON tasks USING gin (search_vector);
CREATE INDEX tasks_tags_idx ON tasks USING gin (tags);

CREATE TABLE task_dependencies (
  task_id text NOT NULL REFERENCES tasks (id),
  depends_on_id text NOT NULL REFERENCES tasks (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, depends_on_id),
  CHECK (task_id <> depends_on_id)
);
CREATE INDEX task_dependencies_depends_on_idx ON task_dependencies (depends_on_id);

CREATE TABLE task_comments (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  task_id text NOT NULL REFERENCES tasks (id),
  user_id text NOT NULL REFERENCES users (id),
  author text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_comments_task_idx ON task_comments (task_id, created_at);

CREATE TABLE task_history (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  task_id text NOT NULL REFERENCES tasks (id),
  user_id text NOT NULL REFERENCES users (id),
  actor text NOT NULL,
  field text NOT NULL,
  old_value jsonb,
  new_value jsonb,
  execution_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_history_task_idx ON task_history (task_id, created_at);
