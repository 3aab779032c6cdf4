//! OSD daemons on the host: `proc_scan` (processes and their open files
//! from `/proc`), `argv` (which OSD a ceph-osd command line serves),
//! `status` (whether an OSD's daemon runs here), `stop` and `start`,
//! `devices` (the devices a running OSD holds), `list` (ceph-volume's OSD
//! listing) and `listing_cache` (the last one, until a command changes the
//! disks), `boot_activation` and `boot_lvs` (the LVs of OSDs meant to
//! start that LVM left inactive after a boot).

pub mod argv;
pub mod boot_activation;
pub mod boot_lvs;
pub mod devices;
pub mod list;
pub mod listing_cache;
pub mod proc_scan;
pub mod start;
pub mod status;
pub mod stop;
