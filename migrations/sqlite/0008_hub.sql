-- The live hub (DESIGN 5.8): a failed job's error code (NestingFailed's ErrorCode, also for a
-- subscriber that comes late), and a stop asked for by continue or StopNesting, which the
-- heartbeat of whichever node runs the job reads.
ALTER TABLE jobs ADD COLUMN error_code TEXT;
ALTER TABLE jobs ADD COLUMN stop_requested_at INTEGER;
