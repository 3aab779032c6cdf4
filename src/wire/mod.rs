//! External data formats, read into domain types. Only this module knows the
//! shape of ceph-volume's JSON and of inventory files.

pub mod agent;
pub mod ceph_volume;
pub mod inventory_file;
pub mod json_stream;
