-- The nodes of a cluster (DESIGN 4, scale-out): each process (`kerf serve`, `kerf serve
-- --no-workers`, `kerf worker`) announces itself here and heartbeats; `kerf nodes` and
-- /readyz list those seen lately. On one SQLite file this is one node, but the table is the
-- same on both stores.
CREATE TABLE nodes (
    id         TEXT PRIMARY KEY,
    role       TEXT NOT NULL,
    compute    TEXT NOT NULL,
    slots      INTEGER NOT NULL,
    host       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    seen_at    INTEGER NOT NULL
);
