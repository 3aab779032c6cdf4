//! What operators read: tables in cephadm's styles, one file per noun, over
//! the API's types (the CLI renders the daemon's answers with them).
//! `table` holds cephadm's two table styles, `units` its size format,
//! `yaml` writes `--format yaml` (writing only: YAML is read in one module,
//! `domain::yaml11`).

pub mod bench;
pub mod deployments;
pub mod devices;
pub mod health;
pub mod hosts;
pub mod osds;
pub mod preview;
pub mod probes;
pub mod removal_preview;
pub mod specs;
pub mod swaps;
pub mod table;
pub mod tokens;
pub mod units;
pub mod yaml;
