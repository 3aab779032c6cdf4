-- A device held until a new disk is in another device's slot (`device
-- replace` of a shared DB SSD holds the HDDs whose DBs were on it): that
-- slot's path, on the same host. NULL for every other hold. The hold ends
-- when the host's inventory shows a new disk at that path, when the slot's
-- own hold is released, or with `device replace HOST SLOT --clear`.
ALTER TABLE held_devices ADD COLUMN waits_for_slot TEXT;
