-- Web calls (web.search, web.fetch) per user and UTC day: the budget
-- limits.web_calls_per_user_per_day, shared by every instance, and `steward usage`.
CREATE TABLE web_call_days (
  user_id text NOT NULL,
  day date NOT NULL,
  searches integer NOT NULL DEFAULT 0,
  fetches integer NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, day)
);
CREATE INDEX web_call_days_day_idx ON web_call_days (day);
