-- Disk probes (`device probe`): fio on a blank disk before it becomes an
-- OSD. The row is written when the probe is asked (`queued`, naming the
-- token that asked: the operator's intent, stored before any agent is
-- asked), marked `running` before the agent is asked to run fio, and
-- finished with the figures or the error. A probe found `running` when the
-- daemon starts was cut off: it is marked failed, never run again (fio
-- may have written on the disk).

CREATE TABLE disk_probes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- domain::probe::DiskKey::stored(): `id:<device id>` (the results
    -- follow the disk), or `slot:<host>:<path>` for a disk without one
    disk_key TEXT NOT NULL,
    host TEXT NOT NULL,
    path TEXT NOT NULL,
    device_id TEXT,
    -- what makes disks comparable, from the inventory when it was asked
    device_class TEXT,
    size_bytes INTEGER,
    model TEXT,
    -- quick | full
    mode TEXT NOT NULL,
    -- queued | running | done | failed
    state TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    -- the four headline figures (bytes/s, bytes/s, IOPS, IOPS)
    seq_write_bps REAL,
    seq_read_bps REAL,
    rand_read_iops REAL,
    sync_write_iops REAL,
    -- each job's figures (domain::probe::JobFigures, JSON), fio's report
    -- as printed, the command line, the agent's steps (JSON list)
    jobs_json TEXT,
    fio_json TEXT,
    command TEXT,
    steps_json TEXT,
    error TEXT,
    -- the token that asked
    actor TEXT
);
CREATE INDEX disk_probes_by_disk ON disk_probes(disk_key, id);
CREATE INDEX disk_probes_by_state ON disk_probes(state, id);
-- One probe at a time per disk.
CREATE UNIQUE INDEX disk_probes_one_pending ON disk_probes(disk_key) WHERE state IN ('queued', 'running');
