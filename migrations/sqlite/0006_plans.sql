-- An account's plan (DESIGN 5.9): nesting minutes included per 30-day period counted from
-- period_start (the StartDate of /v1/status), fairness and overage switches, trial flags and a
-- balance. A new account gets 600 included minutes (operators change it with
-- `kerf accounts set-plan`).
ALTER TABLE accounts ADD COLUMN included_minutes REAL NOT NULL DEFAULT 600 CHECK (included_minutes >= 0);
ALTER TABLE accounts ADD COLUMN period_start INTEGER;
ALTER TABLE accounts ADD COLUMN fairness_enabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN overage_enabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN is_on_trial INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN has_had_trial INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN has_trial_request INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN requires_payment INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN credit REAL NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN paid_until INTEGER;
CREATE INDEX jobs_by_key_completion ON jobs (api_key_id, completed_at);
