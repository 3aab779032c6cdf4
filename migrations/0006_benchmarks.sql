-- Benchmarks: each per-OSD bench (`ceph tell osd.N bench`) as asked, run
-- and measured, and each cluster benchmark (`rados bench`) with its state.
-- A row is written before the bench it stands for runs (state `queued`,
-- then `running`), so a bench cut off by a restart is marked, never lost
-- and never run twice.

CREATE TABLE osd_benches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    osd_id INTEGER NOT NULL,
    -- the host it runs on: at most one bench per host at a time
    host TEXT NOT NULL,
    -- what makes OSDs comparable, as Ceph reported it when it was asked
    device_class TEXT,
    size_bytes INTEGER,
    model TEXT,
    bytes INTEGER NOT NULL,
    block_size INTEGER NOT NULL,
    -- queued | running | done | failed
    state TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    bytes_per_sec REAL,
    iops REAL,
    elapsed_s REAL,
    error TEXT,
    -- the token that asked
    actor TEXT
);
CREATE INDEX osd_benches_by_osd ON osd_benches(osd_id, id);
CREATE INDEX osd_benches_by_state ON osd_benches(state, id);

CREATE TABLE cluster_benches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT,
    -- domain::bench::cluster::ClusterBench as JSON (request, phase, shape,
    -- results, warnings); `phase` repeats its phase for queries
    state TEXT NOT NULL,
    phase TEXT NOT NULL,
    -- 1 until it is done or failed; one active at a time
    active INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    actor TEXT,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX cluster_benches_one_active ON cluster_benches(active) WHERE active = 1;
