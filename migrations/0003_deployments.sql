-- OSD deployments: the state machine's state (one per host, spec and set of
-- disks), and every action issued to a host (written before it is issued).

CREATE TABLE deployments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    host TEXT NOT NULL,
    service_name TEXT NOT NULL,
    -- domain::deploy::Deployment as JSON; `phase` repeats its phase for queries
    state TEXT NOT NULL,
    phase TEXT NOT NULL,
    -- 1 until it is done or gave up; one active deployment per spec and host
    active INTEGER NOT NULL,
    waiting_on TEXT,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX deployments_one_active_per_spec_host ON deployments(service_name, host) WHERE active = 1;

CREATE TABLE deployment_actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    deployment_id INTEGER NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
    -- domain::deploy::DeployEffect as JSON
    effect TEXT NOT NULL,
    -- what exactly was asked of the host (the ceph-volume command, the OSD)
    detail TEXT NOT NULL,
    issued_at INTEGER NOT NULL,
    finished_at INTEGER,
    outcome TEXT
);
CREATE INDEX deployment_actions_by_deployment ON deployment_actions(deployment_id, id);
