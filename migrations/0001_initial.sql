-- Hosts, their inventories, applied specs, held devices and the event log.

CREATE TABLE hosts (
    name TEXT PRIMARY KEY NOT NULL,
    -- host:port of the host's agent
    addr TEXT NOT NULL,
    -- JSON list of labels
    labels TEXT NOT NULL DEFAULT '[]',
    -- cephadm plans hosts in the order they were added
    position INTEGER NOT NULL,
    added_at INTEGER NOT NULL,
    -- set at the first failed poll after a success, cleared by the next success
    unreachable_since INTEGER,
    last_error TEXT,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    next_poll_at INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE inventories (
    host TEXT PRIMARY KEY NOT NULL REFERENCES hosts(name) ON DELETE CASCADE,
    -- when the agent took it, and when we stored it
    taken_at INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    source TEXT NOT NULL,
    can_create_osds INTEGER NOT NULL,
    note TEXT,
    -- the device list as the agent sent it (ceph-volume inventory JSON)
    devices TEXT NOT NULL,
    -- hash of `devices`, to notice changes cheaply
    fingerprint TEXT NOT NULL
);

CREATE TABLE specs (
    service_name TEXT PRIMARY KEY NOT NULL,
    service_id TEXT,
    -- the document as the operator wrote it, and as canonical JSON (re-read at start)
    source TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    unmanaged INTEGER NOT NULL,
    version INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE spec_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    service_name TEXT NOT NULL,
    version INTEGER NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('applied', 'removed')),
    source TEXT NOT NULL,
    at INTEGER NOT NULL
);

-- What the reconciler last did for a spec on a host, so that it acts again
-- only when the spec or the host's inventory changed.
CREATE TABLE spec_host_runs (
    service_name TEXT NOT NULL,
    host TEXT NOT NULL REFERENCES hosts(name) ON DELETE CASCADE,
    spec_version INTEGER NOT NULL,
    inventory_fingerprint TEXT NOT NULL,
    command TEXT NOT NULL,
    outcome TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (service_name, host)
);

-- Devices no spec may take until an operator releases them (zapped by
-- osdkeeper, or freed by an OSD removal).
CREATE TABLE held_devices (
    host TEXT NOT NULL REFERENCES hosts(name) ON DELETE CASCADE,
    path TEXT NOT NULL,
    reason TEXT NOT NULL,
    since INTEGER NOT NULL,
    PRIMARY KEY (host, path)
);

CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    level TEXT NOT NULL CHECK (level IN ('info', 'warning', 'error')),
    kind TEXT NOT NULL,
    host TEXT,
    subject TEXT,
    message TEXT NOT NULL
);
CREATE INDEX events_at ON events(at);
