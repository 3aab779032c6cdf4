//! The daemon's HTTP API as types: every request body, query and answer
//! under `/api/v1/`. The daemon's read model builds the answers, `api/`
//! sends them (and describes them in the OpenAPI document), and the CLI
//! reads them back as the same types, never as untyped JSON.

#[macro_use]
pub mod mirror;
pub mod backup;
pub mod bench;
pub mod cluster;
pub mod deployments;
pub mod devices;
pub mod error;
pub mod events;
pub mod hosts;
mod names;
pub mod osds;
pub mod preview;
pub mod probes;
pub mod removal_preview;
pub mod specs;
pub mod summary;
pub mod swaps;
pub mod tokens;
pub mod workers;

/// A page of a longer list: the API sends `items` as the body and `total`
/// (before offset and limit) in the `x-total-count` header.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: usize,
}

impl<T> Page<T> {
    /// `items` after skipping `offset` and keeping at most `limit`.
    pub fn of(items: Vec<T>, offset: Option<usize>, limit: Option<usize>) -> Page<T> {
        let total = items.len();
        let items = items.into_iter().skip(offset.unwrap_or(0)).take(limit.unwrap_or(usize::MAX)).collect();
        Page { items, total }
    }
}

/// Percent-encodes a path segment or query value.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
