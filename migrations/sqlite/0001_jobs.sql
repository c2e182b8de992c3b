-- Jobs: the database row is the truth about a job (DESIGN 4).
-- Times are Unix milliseconds (UTC).
CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    api_key_id       TEXT NOT NULL,
    kind             TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('Held', 'Queued', 'Running', 'Completed', 'Failed')),
    request          TEXT NOT NULL,
    webhook_uri      TEXT,
    -- fencing token: bumped at every claim; every update by a worker names the attempt it claimed
    attempt          INTEGER NOT NULL DEFAULT 0,
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    error            TEXT,
    result_id        TEXT,
    result           TEXT,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    completed_at     INTEGER
);
CREATE INDEX jobs_by_state ON jobs (state, created_at);

-- The transactional outbox: one row per webhook delivery, written with the state change it reports.
CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id          TEXT NOT NULL REFERENCES jobs (id),
    uri             TEXT NOT NULL,
    body            TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_status     INTEGER,
    last_error      TEXT,
    delivered_at    INTEGER,
    gave_up         INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL
);
CREATE INDEX outbox_due ON outbox (delivered_at, gave_up, next_attempt_at);
