//! osdkeeper: manages the lifecycle of Ceph OSDs the way cephadm does.
//!
//! Layout (see ARCHITECTURE.md for the map and the invariants):

/// The command line.
pub mod cli;
/// The pure core: spec parsing, device selection, planning. No I/O, no async.
pub mod domain;
/// Tables and JSON documents for operators.
pub mod render;
/// External formats (ceph-volume inventory JSON, inventory files) into domain types.
pub mod wire;
/// The host agent (`osdkeeper agent`).
pub mod agent_server;
/// SQLite persistence: the only module with SQL.
pub mod store;
