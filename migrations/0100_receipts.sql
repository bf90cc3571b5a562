-- Receipts (issue 21): what each effect of a turn did, written by Steward from its records.
--
-- skill_executions.receipt: set for a mutating skill call that reached its handler (or that the
-- sentinel stopped): the short identifying detail of its receipt line (`Alpha plan (t_4kx9m2qa)`),
-- from the handler's result when it gave one, else from the command's main flag. Null for
-- read-only calls and calls that never got that far (bad command, out of scope).
-- turns.receipts: the receipts the turn ended with ({skill, status, summary, execution_id}),
-- including the lines that contradict a claim with no call behind it, so a redelivered message
-- is answered with exactly what the first answer said.
ALTER TABLE skill_executions ADD COLUMN receipt text;
ALTER TABLE turns ADD COLUMN receipts jsonb;
