-- Scale-out (issue 19). A nest's size (the part copies it asks for, or a 1D plan's pieces), so
-- that a node can prefer large or small nests (GPU workers the large ones); and the attempt
-- that wrote each result, so that a result written by an attempt that no longer held its job
-- would show (the fencing says there are none).
ALTER TABLE jobs ADD COLUMN size BIGINT NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN attempt BIGINT;
