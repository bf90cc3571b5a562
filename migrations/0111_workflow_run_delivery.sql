-- The delivery of a workflow run's output (channels/ `deliveries`): where it went and whether it arrived.
ALTER TABLE workflow_runs ADD COLUMN delivery_id text;
