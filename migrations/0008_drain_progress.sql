-- Drain progress by data, not PG count: each sample keeps the bytes still
-- to move off the OSD (PG stats of the PGs still mapped to it, read with
-- `ceph pg ls-by-osd`) and why the cluster held them back, when it said
-- (backfill_toofull, a reweight by someone else): the stall's reason.
ALTER TABLE removal_samples ADD COLUMN bytes_left INTEGER;
ALTER TABLE removal_samples ADD COLUMN blocked TEXT;
