-- Each inventory's device list (tens of KB of JSON per host) in a table of
-- its own. The rest of the row is read and written far more often: every
-- poll of an unchanged inventory writes its time, and the poller, planning
-- and /metrics read the small columns of every host. Beside the device
-- list in one row, those reads and writes went through its overflow pages
-- (SQLite reads a row's large text to reach the columns stored after it).
CREATE TABLE inventory_devices (
    host TEXT PRIMARY KEY NOT NULL REFERENCES inventories(host) ON DELETE CASCADE,
    -- the device list as the agent sent it (ceph-volume inventory JSON)
    devices TEXT NOT NULL
);

INSERT INTO inventory_devices (host, devices) SELECT host, devices FROM inventories;

ALTER TABLE inventories DROP COLUMN devices;
