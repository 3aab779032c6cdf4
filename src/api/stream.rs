//! `GET /api/v1/stream`: server-sent events for the dashboard. Each message
//! is `event: <type>` with JSON data: `event` (a new event-log entry),
//! `removals`, `hosts`, `specs` (something changed: refetch), and a
//! `hello` first. Clients that fall behind get `resync`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::stream::Stream;
use tokio::sync::broadcast::error::RecvError;

use crate::daemon::live::Live;
use crate::daemon::Daemon;

#[utoipa::path(get, path = "/api/v1/stream", tag = "live",
    responses((status = 200, description = "text/event-stream: hello, event, removals, hosts, specs, resync")))]
pub async fn stream(State(d): State<Arc<Daemon>>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut rx = d.live.subscribe();
    let closing = d.shutting_down.clone();
    let s = async_stream(move |tx| async move {
        if tx.send(Event::default().event("hello").data("{}")).await.is_err() {
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
                    if tx.send(Event::default().event("resync").data("{}")).await.is_err() {
                        return;
                    }
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            let (name, data) = match &msg {
                Live::Event { event } => ("event", serde_json::to_string(event).unwrap_or_default()),
                Live::Removals => ("removals", "{}".into()),
                Live::Hosts => ("hosts", "{}".into()),
                Live::Specs => ("specs", "{}".into()),
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
