//! What operators read: tables in cephadm's styles, one file per noun, over
//! the API's types (the CLI renders the daemon's answers with them).

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
