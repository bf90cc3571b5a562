-- A schedule paused on the dashboard keeps its cron and zone: its times pass without a run
-- until it is resumed (a manual run still works). Cleared with the row when the schedule goes.
ALTER TABLE workflow_schedules ADD COLUMN paused_at timestamptz;
