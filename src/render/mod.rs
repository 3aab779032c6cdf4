//! Turning results into what operators read: tables and JSON documents.

pub mod preview;
pub mod table;
pub mod units;
