//! Answers from the daemon's read model, serialized once per snapshot and
//! question: a status polled by many clients is the same bytes until the
//! model changes. The cache is keyed by route and query and holds the
//! snapshot's version; a newer snapshot replaces the entry.
//!
//! An answer from a part that could not be brought up to date says so in
//! two headers: `x-read-error` (why) and `x-read-at` (when what it shows
//! was read, ms since the epoch).

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::daemon::read_model::View;

/// Entries kept before the cache starts over (queries are few in
/// practice: a dashboard's, a script's; a crawler's must not grow it).
const MAX_ENTRIES: usize = 256;

pub const READ_ERROR: &str = "x-read-error";
pub const READ_AT: &str = "x-read-at";

/// A serialized answer and its total before paging, if it is a page.
#[derive(Clone)]
struct Entry {
    version: u64,
    body: Bytes,
    total: Option<usize>,
}

#[derive(Default)]
pub struct SnapshotCache {
    entries: Mutex<HashMap<(&'static str, String), Entry>>,
}

impl SnapshotCache {
    /// The answer to `key` from `view`: cached if serialized from this
    /// snapshot already, else made by `answer` (the value and its total).
    pub fn answer<T, A: Serialize>(
        &self,
        route: &'static str,
        key: String,
        view: &View<T>,
        answer: impl FnOnce(&T) -> (A, Option<usize>),
    ) -> Response {
        let version = view.snapshot.version;
        let hit = self.entries.lock().expect("snapshot cache lock").get(&(route, key.clone())).cloned();
        let entry = match hit {
            Some(e) if e.version == version => e,
            _ => {
                let (value, total) = answer(&view.snapshot.value);
                let body = Bytes::from(serde_json::to_vec(&value).expect("API types serialize"));
                let entry = Entry { version, body, total };
                let mut entries = self.entries.lock().expect("snapshot cache lock");
                if entries.len() >= MAX_ENTRIES {
                    entries.clear();
                }
                entries.insert((route, key), entry.clone());
                entry
            }
        };
        respond(entry, view)
    }
}

fn respond<T>(entry: Entry, view: &View<T>) -> Response {
    let mut r = ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], Body::from(entry.body))
        .into_response();
    let headers = r.headers_mut();
    if let Some(total) = entry.total {
        headers.insert(HeaderName::from_static("x-total-count"), HeaderValue::from(total));
    }
    if let Some(failure) = &view.failure {
        headers.insert(HeaderName::from_static(READ_ERROR), header_text(&failure.error));
        headers.insert(HeaderName::from_static(READ_AT), HeaderValue::from(view.snapshot.read_at));
    }
    r
}

/// An error message as a header value: what a header cannot carry
/// (control characters, non-ASCII) becomes `?`.
fn header_text(text: &str) -> HeaderValue {
    let clean: String = text.chars().map(|c| if c == ' ' || c.is_ascii_graphic() { c } else { '?' }).collect();
    HeaderValue::from_str(&clean).unwrap_or_else(|_| HeaderValue::from_static("?"))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::daemon::read_model::{Failure, Published};

    fn view(version: u64, value: Vec<u32>, failure: Option<Failure>) -> View<Vec<u32>> {
        View { snapshot: Arc::new(Published { version, read_at: 7, value }), failure }
    }

    async fn body(r: Response) -> String {
        let bytes = axum::body::to_bytes(r.into_body(), usize::MAX).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn an_answer_is_made_once_per_snapshot_and_key() {
        let cache = SnapshotCache::default();
        let made = std::cell::Cell::new(0);
        let ask = |v: &View<Vec<u32>>, key: &str| {
            cache.answer("r", key.into(), v, |x| {
                made.set(made.get() + 1);
                (x.clone(), Some(x.len()))
            })
        };
        let one = view(1, vec![1, 2], None);
        let r = ask(&one, "a");
        assert_eq!(r.headers()["x-total-count"], "2");
        assert!(r.headers().get(READ_ERROR).is_none());
        assert_eq!(body(r).await, "[1,2]");
        assert_eq!(body(ask(&one, "a")).await, "[1,2]");
        ask(&one, "b");
        assert_eq!(body(ask(&view(2, vec![3], None), "a")).await, "[3]", "a newer snapshot is served");
        assert_eq!(made.get(), 3, "one per snapshot and key");
    }

    #[tokio::test]
    async fn a_part_behind_says_why_and_since_when() {
        let cache = SnapshotCache::default();
        let failure = Failure { error: "cannot read the cluster: timeout\nafter 30 s".into(), at: 9 };
        let r = cache.answer("r", String::new(), &view(1, vec![], Some(failure)), |x| (x.clone(), None));
        assert_eq!(r.headers()[READ_ERROR], "cannot read the cluster: timeout?after 30 s");
        assert_eq!(r.headers()[READ_AT], "7");
        assert!(r.headers().get("x-total-count").is_none());
    }
}
