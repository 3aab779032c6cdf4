//! osdkeeper: manages the lifecycle of Ceph OSDs the way cephadm does.
//!
//! Layout (see ARCHITECTURE.md for the map and the invariants):

/// The daemon's client for host agents.
pub mod agent_client;
/// The host agent (`osdkeeper agent`).
pub mod agent_server;
/// The HTTP API of the daemon.
pub mod api;
/// The composition root: wires store, adapters, daemon and API together.
pub mod app;
/// The Ceph cluster adapter (the `ceph` CLI and the cluster session).
pub mod ceph;
/// The command line.
pub mod cli;
/// The CLI's HTTP client for the daemon.
pub mod client;
/// Wall-clock helpers for the daemon (the core never reads the clock).
pub mod clock;
/// Daemon settings: config file, environment, flags.
pub mod config;
/// The daemon: shared state, background loops, operations.
pub mod daemon;
/// The pure core: every decision (specs, planning, state machines, gates). No I/O, no async.
pub mod domain;
/// An error with its causes, as one message.
pub mod error_chain;
/// The HTTP(S) server of the daemon and the agent, with its timeouts and connection cap.
pub mod http_server;
/// Tables and JSON documents for operators.
pub mod render;
/// A simulated cluster and agents (demo, tests, scale runs).
pub mod sim;
/// The daemon's state behind a seam; SQL only in its SQLite adapter.
pub mod store;
/// Logging setup.
pub mod telemetry;
/// Appending formatted text to a String.
mod text;
/// TLS for every hop (rustls): server configs, trusted CAs.
pub mod tls;
/// External formats: ceph-volume's JSON, inventory files, the agent's and the daemon's HTTP APIs.
pub mod wire;
