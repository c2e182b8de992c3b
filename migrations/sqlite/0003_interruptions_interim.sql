-- A job's attempt number is its fencing token only; interruptions (a lease that expired, a
-- process that died) are counted apart, so graceful hand-backs at shutdown do not count.
ALTER TABLE jobs ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;
-- Interim deliveries not yet made are superseded by a newer result of the same job.
ALTER TABLE outbox ADD COLUMN interim INTEGER NOT NULL DEFAULT 0;
CREATE INDEX outbox_by_job ON outbox (job_id, delivered_at);
