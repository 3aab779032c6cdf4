//! osdkeeper: manages the lifecycle of Ceph OSDs the way cephadm does.
//!
//! Layout (see ARCHITECTURE.md for the map and the invariants):

/// The pure core: spec parsing, device selection, planning. No I/O, no async.
pub mod domain;
