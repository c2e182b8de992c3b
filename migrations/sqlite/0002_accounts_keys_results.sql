-- Accounts and their API keys (DESIGN 4, 5.9). A key is shown once as kerf_<id>_<secret>;
-- only the SHA-256 of the secret is kept.
CREATE TABLE accounts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   INTEGER NOT NULL REFERENCES accounts (id),
    secret_hash  BLOB NOT NULL,
    reference    TEXT NOT NULL DEFAULT '',
    key_type     TEXT NOT NULL CHECK (key_type IN ('Usage', 'Admin')),
    parallelism  INTEGER NOT NULL CHECK (parallelism >= 1),
    is_trial     INTEGER NOT NULL DEFAULT 0,
    expires_at   INTEGER,
    cancelled_at INTEGER,
    created_at   INTEGER NOT NULL
);

-- Every result a job produced: interim ones (NestingStatus 0) and the final one (1).
-- `status` is the NestingStatusMessage delivered for it; `report` the ReportSourceResponseV1 body
-- without its Status; `layout` the machine-readable layout the exports are built from.
CREATE TABLE results (
    id         TEXT PRIMARY KEY,
    job_id     TEXT NOT NULL REFERENCES jobs (id),
    status     TEXT NOT NULL,
    report     TEXT NOT NULL,
    layout     TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX results_by_job ON results (job_id, created_at);

ALTER TABLE outbox ADD COLUMN last_attempt_at INTEGER;
CREATE INDEX jobs_by_key ON jobs (api_key_id, state);
