-- A journaled file operation that recovery can neither complete nor roll back is set aside
-- ('quarantined') instead of being replayed, and failing, on every later operation and start.
-- What it left behind is described in <data dir>/files/.quarantine/<id>.json.
ALTER TABLE file_operations DROP CONSTRAINT IF EXISTS file_operations_status_check;
ALTER TABLE file_operations ADD CONSTRAINT file_operations_status_check
  CHECK (status IN ('pending', 'completed', 'rolled_back', 'quarantined'));
