-- Exports asked for (DESIGN 5.3): each ResponseType once per result. An export is run as a
-- job of kind 'export' (lease, retries, outbox as any job); this row ties the result and the
-- type to it. A failed export may be asked for again (its row is then replaced).
CREATE TABLE exports (
    result_id     TEXT NOT NULL,
    response_type TEXT NOT NULL,
    job_id        TEXT NOT NULL REFERENCES jobs (id),
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (result_id, response_type)
);
