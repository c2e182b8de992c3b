-- Admission by plan (DESIGN 4): the minutes a queued or running nest holds (its
-- MaxRunTimeSeconds, in ms; 0 for exports) and whether it was admitted as overage, so that
-- ReservedMinutes and OverageMinutes come from the rows themselves.
ALTER TABLE jobs ADD COLUMN reserved_ms INTEGER NOT NULL DEFAULT 0 CHECK (reserved_ms >= 0);
ALTER TABLE jobs ADD COLUMN overage INTEGER NOT NULL DEFAULT 0;
