-- Inbound rate limits shared by every instance: one counter per key (user or channel) and minute.
CREATE TABLE inbound_rate_windows (
  key text NOT NULL,
  window_start timestamptz NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
CREATE INDEX inbound_rate_windows_start_idx ON inbound_rate_windows (window_start);
