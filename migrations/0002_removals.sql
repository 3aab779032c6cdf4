-- OSD removals: the state machine's state, its progress samples, and every
-- action issued to the cluster or a host (written before it is issued).

CREATE TABLE removals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    osd_id INTEGER NOT NULL,
    host TEXT NOT NULL,
    -- domain::removal::Removal as JSON; `phase` repeats its phase for queries
    state TEXT NOT NULL,
    phase TEXT NOT NULL,
    -- 1 until the removal is done or cancelled; one active removal per OSD
    active INTEGER NOT NULL,
    waiting_on TEXT,
    last_error TEXT,
    pgs_now INTEGER,
    kb_used_now INTEGER,
    requested_at INTEGER NOT NULL,
    drain_started_at INTEGER,
    finished_at INTEGER,
    updated_at INTEGER NOT NULL,
    -- bumped on every write, to catch concurrent writers
    version INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX removals_one_active_per_osd ON removals(osd_id) WHERE active = 1;

CREATE TABLE removal_samples (
    removal_id INTEGER NOT NULL REFERENCES removals(id) ON DELETE CASCADE,
    at INTEGER NOT NULL,
    pgs INTEGER NOT NULL,
    kb_used INTEGER
);
CREATE INDEX removal_samples_by_removal ON removal_samples(removal_id, at);

CREATE TABLE removal_actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    removal_id INTEGER NOT NULL REFERENCES removals(id) ON DELETE CASCADE,
    osd_id INTEGER NOT NULL,
    -- domain::removal::Effect as JSON
    effect TEXT NOT NULL,
    destructive INTEGER NOT NULL,
    issued_at INTEGER NOT NULL,
    finished_at INTEGER,
    outcome TEXT
);

-- A hold names the disk by its id too, where the host reports one, so that
-- a new disk put in the same bay (same path, other id) is not held.
ALTER TABLE held_devices ADD COLUMN device_id TEXT;
