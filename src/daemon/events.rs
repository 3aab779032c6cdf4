//! The event log and the live streams: every change worth telling an
//! operator is recorded (with the token that asked, `audit`) and sent to
//! the open dashboards; the streams end at shutdown.

use tokio_util::sync::CancellationToken;

use super::audit;
use super::live::{self, Live, LiveSender};
use super::DaemonError;
use crate::clock::now_ms;
use crate::domain::event::{EventKind, Level};
use crate::store::{EventFilter, LoggedEvent, NewEvent, Store};
use crate::wire::api::events::{Event, EventQuery};

pub struct Events {
    store: Store,
    live: LiveSender,
    /// Cancelled when the daemon shuts down: ends the open live streams,
    /// which would otherwise keep the HTTP server from finishing.
    shutting_down: CancellationToken,
}

impl Events {
    pub fn new(store: Store) -> Events {
        Events { store, live: live::channel(), shutting_down: CancellationToken::new() }
    }

    /// Records an event and logs it; a failure to record is logged, not fatal.
    pub async fn record(
        &self,
        level: Level,
        kind: EventKind,
        host: Option<&str>,
        subject: Option<&str>,
        message: String,
    ) {
        let e = NewEvent {
            level,
            kind,
            host: host.map(str::to_string),
            subject: subject.map(str::to_string),
            message,
            actor: audit::actor(),
        };
        self.record_all(vec![e]).await;
    }

    /// Events logged, stored together in one transaction, then sent; a
    /// failure to store them is logged, not fatal.
    pub async fn record_all(&self, events: Vec<NewEvent>) {
        for e in &events {
            log(e.level, e.kind, e.host.as_deref(), e.actor.as_deref(), &e.message);
        }
        let n = events.len();
        match self.store.add_events(events, now_ms()).await {
            Ok(stored) => stored.into_iter().for_each(|e| self.notify(Live::Event { event: e.into() })),
            Err(err) => tracing::error!(events = n, "cannot record events: {err}"),
        }
    }

    /// An Info event about a host, to store with what it tells in one
    /// transaction (the request's token as its actor); `told` once stored.
    pub fn host_event(&self, kind: EventKind, host: &str, message: String) -> NewEvent {
        NewEvent { level: Level::Info, kind, host: Some(host.into()), subject: None, message, actor: audit::actor() }
    }

    /// An event stored: logged and sent to the open dashboards.
    pub fn told(&self, event: LoggedEvent) {
        log(event.level, event.kind, event.host.as_deref(), event.actor.as_deref(), &event.message);
        self.notify(Live::Event { event: event.into() });
    }

    /// Tells the open live streams. Nobody listening is normal (no
    /// dashboard open), so a send to no one is not an error.
    pub fn notify(&self, message: Live) {
        let _no_listener_is_fine = self.live.send(message);
    }

    /// A receiver of live updates, and the token that ends it at shutdown.
    pub fn subscribe(&self) -> (tokio::sync::broadcast::Receiver<Live>, CancellationToken) {
        (self.live.subscribe(), self.shutting_down.clone())
    }

    /// Ends the open live streams (the HTTP server waits for them).
    pub fn close_streams(&self) {
        self.shutting_down.cancel();
    }

    /// The event log, filtered.
    pub async fn list(&self, q: &EventQuery) -> Result<Vec<Event>, DaemonError> {
        let limit = q.limit.unwrap_or(100).clamp(1, 1000);
        let subject = q.osd.map(|id| format!("osd.{id}"));
        let filter =
            EventFilter { after: q.after, host: q.host.as_deref(), subject: subject.as_deref(), since: q.since };
        Ok(self.store.events_matching(&filter, limit).await?.into_iter().map(Event::from).collect())
    }
}

fn log(level: Level, kind: EventKind, host: Option<&str>, by: Option<&str>, message: &str) {
    let kind = kind.as_str();
    match level {
        Level::Info => tracing::info!(kind, host, actor = by, "{message}"),
        Level::Warning => tracing::warn!(kind, host, actor = by, "{message}"),
        Level::Error => tracing::error!(kind, host, actor = by, "{message}"),
    }
}
