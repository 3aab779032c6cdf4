-- One operation kernel: removals, deployments, cluster benchmarks and disk
-- probes become rows of one table, their actions rows of one action log.
-- Each kind keeps its own numbering (`number`: "removal 7", "cluster
-- benchmark 3", what the API shows), carried over from the old tables'
-- ids. A kind's state is JSON in the kind's stored form; rows written
-- before this migration hold the forms of their old tables (read as
-- version 1), with the columns the old tables kept beside the JSON merged
-- into it.

CREATE TABLE operations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- removal | deployment | cluster-bench | disk-probe
    kind TEXT NOT NULL,
    number INTEGER NOT NULL,
    -- what it acts on: one active operation per kind and subject
    subject TEXT NOT NULL,
    host TEXT,
    -- the kind's phase, repeated from the state for queries
    phase TEXT NOT NULL,
    -- 1 until it finished
    active INTEGER NOT NULL,
    state TEXT NOT NULL,
    waiting_on TEXT,
    last_error TEXT,
    -- the token that asked
    actor TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    -- effects that failed in a row (the executor backs off)
    failures INTEGER NOT NULL DEFAULT 0,
    -- bumped on every write, to catch concurrent writers
    version INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX operations_number ON operations(kind, number);
CREATE UNIQUE INDEX operations_one_active ON operations(kind, subject) WHERE active = 1;
CREATE INDEX operations_by_subject ON operations(kind, subject, id);
CREATE INDEX operations_by_phase ON operations(kind, active, phase, id);

-- Every effect of every operation: written before it is carried out (the
-- intent), completed with its outcome after. One without an outcome was
-- cut off by a restart.
CREATE TABLE operation_actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    operation_id INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,
    -- the effect's name (purge, prepare, bench-write, probe)
    effect TEXT NOT NULL,
    -- the effect in the kind's stored form (JSON)
    args TEXT NOT NULL,
    -- what exactly was asked, for people
    detail TEXT NOT NULL DEFAULT '',
    destructive INTEGER NOT NULL,
    issued_at INTEGER NOT NULL,
    finished_at INTEGER,
    -- ok | failed | unknown
    outcome TEXT CHECK (outcome IN ('ok', 'failed', 'unknown')),
    outcome_detail TEXT,
    -- what it printed that is kept whole (fio's report)
    output TEXT
);
CREATE INDEX operation_actions_by_operation ON operation_actions(operation_id, id);
CREATE INDEX operation_actions_open ON operation_actions(operation_id) WHERE finished_at IS NULL;

-- A drain's progress samples (was removal_samples).
CREATE TABLE drain_samples (
    operation_id INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,
    at INTEGER NOT NULL,
    pgs INTEGER NOT NULL,
    kb_used INTEGER,
    bytes_left INTEGER,
    blocked TEXT
);
CREATE INDEX drain_samples_by_operation ON drain_samples(operation_id, at);

-- Removals: the figures kept in columns join the state.
INSERT INTO operations (kind, number, subject, host, phase, active, state, waiting_on, last_error, created_at,
                        updated_at, finished_at, version)
SELECT 'removal', id, 'osd.' || osd_id, host, phase, active,
       json_set(state, '$.pgs_now', pgs_now, '$.kb_used_now', kb_used_now, '$.drain_started_at', drain_started_at),
       waiting_on, last_error, requested_at, updated_at, finished_at, version
FROM removals ORDER BY id;

-- Old outcomes were text: "ok: what it did", "failed: why", "unknown: why".
INSERT INTO operation_actions (operation_id, effect, args, detail, destructive, issued_at, finished_at, outcome,
                               outcome_detail)
SELECT o.id, COALESCE(json_extract(a.effect, '$.effect'), 'unknown'), a.effect, 'osd.' || a.osd_id, a.destructive,
       a.issued_at, a.finished_at,
       CASE WHEN a.outcome IS NULL THEN NULL
            WHEN a.outcome LIKE 'ok%' THEN 'ok'
            WHEN a.outcome LIKE 'failed%' THEN 'failed'
            ELSE 'unknown' END,
       CASE WHEN instr(a.outcome, ': ') > 0 THEN substr(a.outcome, instr(a.outcome, ': ') + 2) ELSE a.outcome END
FROM removal_actions a JOIN operations o ON o.kind = 'removal' AND o.number = a.removal_id
ORDER BY a.id;

INSERT INTO drain_samples (operation_id, at, pgs, kb_used, bytes_left, blocked)
SELECT o.id, s.at, s.pgs, s.kb_used, s.bytes_left, s.blocked
FROM removal_samples s JOIN operations o ON o.kind = 'removal' AND o.number = s.removal_id;

-- Deployments.
INSERT INTO operations (kind, number, subject, host, phase, active, state, waiting_on, last_error, created_at,
                        updated_at, finished_at, version)
SELECT 'deployment', id, host || ':' || service_name, host, phase, active, state, waiting_on, last_error,
       created_at, updated_at, finished_at, version
FROM deployments ORDER BY id;

INSERT INTO operation_actions (operation_id, effect, args, detail, destructive, issued_at, finished_at, outcome,
                               outcome_detail)
SELECT o.id, COALESCE(json_extract(a.effect, '$.effect'), 'unknown'), a.effect, a.detail, 0, a.issued_at,
       a.finished_at,
       CASE WHEN a.outcome IS NULL THEN NULL
            WHEN a.outcome LIKE 'ok%' THEN 'ok'
            WHEN a.outcome LIKE 'failed%' THEN 'failed'
            ELSE 'unknown' END,
       CASE WHEN instr(a.outcome, ': ') > 0 THEN substr(a.outcome, instr(a.outcome, ': ') + 2) ELSE a.outcome END
FROM deployment_actions a JOIN operations o ON o.kind = 'deployment' AND o.number = a.deployment_id
ORDER BY a.id;

-- Cluster benchmarks: `in_flight` (an action started and not recorded as
-- ended) becomes what it always stood for, an action without an outcome.
INSERT INTO operations (kind, number, subject, host, phase, active, state, actor, created_at, updated_at,
                        finished_at, version)
SELECT 'cluster-bench', id, 'cluster', NULL, phase, active, json_remove(state, '$.in_flight'), actor, created_at,
       updated_at, finished_at, version
FROM cluster_benches ORDER BY id;

INSERT INTO operation_actions (operation_id, effect, args, detail, destructive, issued_at)
SELECT o.id, e.name, json_object('effect', e.name), b.phase, 0, b.updated_at
FROM cluster_benches b
JOIN operations o ON o.kind = 'cluster-bench' AND o.number = b.id
JOIN (SELECT 'queued' AS phase, 'bench-check' AS name UNION ALL SELECT 'preparing', 'bench-prepare'
      UNION ALL SELECT 'write', 'bench-write' UNION ALL SELECT 'seq', 'bench-seq'
      UNION ALL SELECT 'rand', 'bench-rand' UNION ALL SELECT 'cleaning', 'bench-cleanup') e ON e.phase = b.phase
WHERE json_extract(b.state, '$.in_flight') = 1;

-- Disk probes: the columns become the state; fio's report becomes the
-- output of the probe's one action (open for a probe a restart cut off).
INSERT INTO operations (kind, number, subject, host, phase, active, state, last_error, actor, created_at,
                        updated_at, finished_at)
SELECT 'disk-probe', id, disk_key, host, state, CASE WHEN state IN ('queued', 'running') THEN 1 ELSE 0 END,
       json_object('v', 1, 'key', disk_key, 'path', path, 'device_id', device_id, 'device_class', device_class,
                   'size_bytes', size_bytes, 'model', model, 'mode', mode, 'phase', state,
                   'started_at', started_at,
                   'figures', CASE WHEN seq_write_bps IS NULL THEN NULL ELSE
                       json_object('seq_write_bps', seq_write_bps, 'seq_read_bps', seq_read_bps,
                                   'rand_read_iops', rand_read_iops, 'sync_write_iops', sync_write_iops) END,
                   'jobs', json(COALESCE(jobs_json, '[]')), 'command', command,
                   'steps', json(COALESCE(steps_json, '[]')), 'error', error),
       error, actor, requested_at, COALESCE(finished_at, started_at, requested_at), finished_at
FROM disk_probes ORDER BY id;

INSERT INTO operation_actions (operation_id, effect, args, detail, destructive, issued_at, finished_at, outcome,
                               outcome_detail, output)
SELECT o.id, 'probe', '{"effect":"probe"}', p.path || ' on ' || p.host, 1, p.started_at, p.finished_at,
       CASE p.state WHEN 'done' THEN 'ok' WHEN 'failed' THEN 'failed' ELSE NULL END,
       CASE p.state WHEN 'done' THEN p.command WHEN 'failed' THEN p.error ELSE NULL END,
       p.fio_json
FROM disk_probes p JOIN operations o ON o.kind = 'disk-probe' AND o.number = p.id
WHERE p.started_at IS NOT NULL;

DROP TABLE removal_samples;
DROP TABLE removal_actions;
DROP TABLE removals;
DROP TABLE deployment_actions;
DROP TABLE deployments;
DROP TABLE cluster_benches;
DROP TABLE disk_probes;
