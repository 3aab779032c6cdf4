//! Acting on one disk of the host, always under an exclusive claim:
//! `claim` (the claim and what it checks), `exclusive` (the exclusive
//! handle and zeroing through it), `blank` (when a disk counts as blank),
//! `holders` (who holds a busy disk), `label` (the OSD a BlueStore label
//! names), `data_dirs` (OSD data directories on a disk), `zap` (the checks
//! and order of a wipe), `zap_identity` (the disk and OSDs a zap names,
//! checked), `zap_osd` (an OSD's LVs by its fsid), `probe` (fio on a blank
//! disk) and `replace_header` (the being-replaced header).

pub mod blank;
pub mod claim;
pub mod data_dirs;
pub mod exclusive;
pub mod holders;
pub mod label;
pub mod probe;
pub mod replace_header;
pub mod zap;
pub mod zap_identity;
pub mod zap_osd;
