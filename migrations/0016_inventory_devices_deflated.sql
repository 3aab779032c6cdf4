-- Device lists are written zlib-deflated (a BLOB) from this release on;
-- those written before stay JSON text and read as they are. No row is
-- changed here: the migration marks the database as this release's, so
-- that an older daemon, which would read a deflated list as text, refuses
-- it at start instead (docs/operations.md, "Upgrade").
UPDATE inventory_devices SET devices = devices WHERE 0;
