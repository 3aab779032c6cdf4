-- The release of the Ceph whose ceph-volume listed the host's devices, as
-- the agent reported it (`18.2.7 (reef)`); NULL when the agent could not
-- tell (an inventory file, the kernel's view, no `ceph` beside ceph-volume)
-- and for inventories stored before. Text, so that a release this daemon
-- does not know is kept as the agent said it. Part of the inventory's ETag:
-- a package upgrade on the host is stored at the next poll.
ALTER TABLE inventories ADD COLUMN ceph_release TEXT;
