-- The export cache (DESIGN 5.8): exports generated through the hub (GenerateExport), kept for
-- a while (ExpiresUtc) and read with GET /v1/nesting/export/cached. One row per result and
-- type: the export job that makes it, then its payload. An expired row loses its payload at
-- the next purge and the row itself a week later (so the answer can still say "expired").
CREATE TABLE export_cache (
    result_id     TEXT NOT NULL,
    response_type TEXT NOT NULL,
    request_id    TEXT NOT NULL REFERENCES jobs (id),
    job_id        TEXT NOT NULL REFERENCES jobs (id),
    payload       TEXT,
    created_at    INTEGER,
    expires_at    INTEGER,
    PRIMARY KEY (result_id, response_type)
);
CREATE INDEX export_cache_by_job ON export_cache (job_id);
CREATE INDEX export_cache_by_expiry ON export_cache (expires_at);
