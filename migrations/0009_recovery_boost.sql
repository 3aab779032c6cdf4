-- The recovery boost of fast drains (`osd rm --fast`): what it set in the
-- monitors' config database and what was there before, written before the
-- first `ceph config set`, so that after a crash the values are put back
-- from here (the cluster then holds the boosted ones). At most one row.
CREATE TABLE recovery_boost (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    -- domain::removal::boost::Boost as JSON
    state TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
