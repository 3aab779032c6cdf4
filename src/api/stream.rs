//! `GET /api/v1/stream`: server-sent events for the dashboard. Each message
//! is `event: <type>` and one `data:` line of JSON:
//!
//! * `hello`, `{}`: sent first; whatever happened before is not replayed, so
//!   a client fetches what it shows after this.
//! * `event`, an event-log entry as `/api/v1/events` lists it.
//! * `hosts`, `{"hosts": ["f5-422-03"]}`: these hosts were polled; their
//!   inventory (its age at least), reachability or last error may have
//!   changed. The hosts polled within a quarter second share one message,
//!   so thousands of hosts do not flood the stream; a client refetches only
//!   what shows one of the named hosts. A host
//!   added or removed shows as an `event` (`host-added`, `host-removed`);
//!   the added one is named here once its first poll ends.
//! * `removals`, `{"osds": [8, 15]}`: the removals of these OSDs may have
//!   changed (state, PGs, rate); sent after each round of the removal worker
//!   (naming the OSDs it worked on) and when removals are scheduled. An
//!   empty list means any removal may have changed. A drain also moves PGs
//!   onto other OSDs, which are not named.
//! * `specs`, `{}`: specs were applied or removed.
//! * `deployments`, `{}`: OSD deployments moved (after each round of the
//!   deployment worker).
//! * `resync`, `{}`: this client fell behind and messages were dropped;
//!   refetch everything.
//!
//! A comment line is sent every 15 s to keep the connection open.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::stream::Stream;
use tokio::sync::broadcast::error::RecvError;

use crate::daemon::live::Live;

/// The `event:` name of each kind of message, as the dashboard matches them.
pub const HELLO: &str = "hello";
pub const EVENT: &str = "event";
pub const REMOVALS: &str = "removals";
pub const HOSTS: &str = "hosts";
pub const SPECS: &str = "specs";
pub const DEPLOYMENTS: &str = "deployments";
pub const RESYNC: &str = "resync";
pub const MESSAGES: [&str; 7] = [HELLO, EVENT, REMOVALS, HOSTS, SPECS, DEPLOYMENTS, RESYNC];
use crate::daemon::Daemon;

#[utoipa::path(get, path = "/api/v1/stream", tag = "live",
    responses((status = 200, description = "text/event-stream: hello {}, event (an event-log entry), \
        hosts {\"hosts\": [names]}, removals {\"osds\": [ids]}, specs {}, resync {}")))]
pub async fn stream(State(d): State<Arc<Daemon>>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (mut rx, closing) = d.events.subscribe();
    let s = async_stream(move |tx| async move {
        if tx.send(Event::default().event(HELLO).data("{}")).await.is_err() {
            return;
        }
        loop {
            let next = tokio::select! {
                _ = closing.cancelled() => return,
                m = rx.recv() => m,
            };
            let msg = match next {
                Ok(m) => m,
                Err(RecvError::Lagged(_)) => {
                    if tx.send(Event::default().event(RESYNC).data("{}")).await.is_err() {
                        return;
                    }
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            let (name, data) = match &msg {
                Live::Event { event } => (EVENT, serde_json::json!(event).to_string()),
                Live::Removals { osds } => (REMOVALS, serde_json::json!({ "osds": osds }).to_string()),
                Live::Hosts { hosts } => (HOSTS, serde_json::json!({ "hosts": hosts }).to_string()),
                Live::Specs => (SPECS, "{}".into()),
                Live::Deployments => (DEPLOYMENTS, "{}".into()),
            };
            if tx.send(Event::default().event(name).data(data)).await.is_err() {
                return;
            }
        }
    });
    Sse::new(s).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// A stream fed by a task through a small channel (no extra crate needed).
fn async_stream<F, Fut>(producer: F) -> impl Stream<Item = Result<Event, Infallible>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Event>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(producer(tx));
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (Ok(e), rx)) })
}
