//! Keeps every host's inventory fresh: polls each agent on an interval
//! (each host drawn a little earlier at random, `domain::poll_jitter`) with
//! bounded concurrency and a timeout per call, backs off from failing
//! hosts, stores what it gets with its time, and records an event when
//! devices appear, disappear or change, or when a host becomes unreachable.
//!
//! An unchanged inventory costs little: the poller names the one it has
//! (its ETag) and the agent answers `304 Not Modified`; one sent again all
//! the same (by an agent from before the ETag) is found unchanged by its
//! fingerprint before it is parsed. Either way only its new time is
//! written, for a whole round in one transaction (`touch_inventories`).
//! A changed one is parsed once, stored with the round's other changed
//! ones (a transaction per batch: on a store in RADOS each commit costs
//! about 16 ms), and its parse kept in the inventory cache that planning
//! reads (`view`); its events follow once it is stored.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, StreamExt};

use super::Inventory;
use crate::agent_client::InventoryAnswer;
use crate::clock::now_ms;
use crate::daemon::{DaemonError, Pace};
use crate::domain::backoff::backoff;
use crate::domain::event::{EventKind, Level};
use crate::domain::inventory::Device;
use crate::domain::inventory_diff::diff;
use crate::domain::poll_jitter::next_poll_at;
use crate::store::{InventorySeen, PollFailure, PolledInventory, Replaced, StoredInventory};
use crate::store::{ManagedHost, NewEvent};
use crate::wire::agent::RawInventoryReport;
use crate::wire::ceph_volume::parse_device_list;

/// How a poll ended, for its round.
enum Polled {
    /// Answered, inventory unchanged: its time is written with the round's others.
    Unchanged(InventorySeen),
    /// Answered with a changed inventory: stored with the round's others.
    Changed(Box<Fresh>),
    /// Everything is recorded already (a stored inventory, a failure, a host
    /// that is reachable again).
    Recorded,
}

/// A changed inventory, parsed, waiting to be stored.
struct Fresh {
    host: ManagedHost,
    polled: PolledInventory,
    parsed: Arc<Vec<Device>>,
}

/// Unchanged inventories written together; also when a long round has
/// gathered this many, so that a slow round does not hold them all back.
const TOUCH_BATCH: usize = 500;

/// Changed inventories stored together, as many as this at most (each
/// carries its device list: tens of KB, ~4 MB for 256), or those gathered
/// for this long when a poll ends (the rest when the round does), so that
/// a changed disk's event does not wait for a slow host's timeout. 256
/// rather than 64: a cold start of 2000 hosts on the store in RADOS took
/// 3.5 s with 64, 2.4 s with 256 (the local file's 1.6-1.8 s; BENCHMARKS.md).
const FRESH_BATCH: usize = 256;
const FRESH_WAIT: Duration = Duration::from_millis(500);

/// The shortest wait between rounds: hosts due within it wait for the next.
const MIN_TICK: Duration = Duration::from_millis(50);

/// A number that differs per host and poll, for the jitter.
fn draw(host: &str, at: i64) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (host, at).hash(&mut h);
    h.finish()
}

impl Inventory {
    fn backoff(&self, failures: i64) -> Duration {
        backoff(self.config.poll_interval, self.config.max_backoff, failures.clamp(0, 64) as u32)
    }

    /// Polls one host now. Returns the error text when the poll failed.
    pub async fn poll_host(&self, host: &ManagedHost) -> Result<(), String> {
        let known = self.store.inventory_head(&host.name).await.map_err(|e| e.to_string())?.map(|h| h.etag());
        match self.poll(host, known).await? {
            Polled::Unchanged(seen) => {
                self.store.touch_inventories(&[seen]).await.map_err(|e| e.to_string())?;
                self.polls.polled.note(&host.name);
            }
            Polled::Changed(fresh) => self.store_fresh(vec![*fresh]).await.map_err(|e| e.to_string())?,
            Polled::Recorded => return Ok(()),
        }
        // An erasure that failed while the agent was away.
        self.retry_erasures(&host.name).await;
        Ok(())
    }

    /// Asks the host's agent for its inventory, naming the one stored
    /// (`known`, its ETag), and records what came of it, except an unchanged
    /// inventory's new time, which the caller writes.
    #[tracing::instrument(skip_all, fields(host = %host.name))]
    async fn poll(&self, host: &ManagedHost, known: Option<String>) -> Result<Polled, String> {
        let lock = self.poll_lock(&host.name).await;
        let _guard = lock.lock().await;
        let answer = self.agents.inventory(host, known.as_deref()).await;
        let now = now_ms();
        let fresh = match answer {
            Ok(InventoryAnswer::Unchanged) => None,
            Ok(InventoryAnswer::Fresh(report)) if report.host != host.name => {
                return self.poll_failed(host, now, format!(
                    "the agent at {} says it runs on host {:?}, not {:?}; fix the address with `host rm` and `host add`",
                    host.addr, report.host, host.name
                ))
                .await
            }
            Ok(InventoryAnswer::Fresh(report)) => {
                let fingerprint = report.fingerprint();
                let etag = report.etag(&fingerprint);
                (known.as_deref() != Some(etag.as_str())).then_some((report, fingerprint))
            }
            Err(e) => return self.poll_failed(host, now, e.to_string()).await,
        };
        let next_poll = next_poll_at(now, self.config.poll_interval, draw(&host.name, now));
        let Some((report, fingerprint)) = fresh else {
            let seen = InventorySeen { host: host.name.clone(), at: now, next_poll_at: next_poll };
            if host.consecutive_failures == 0 {
                return Ok(Polled::Unchanged(seen));
            }
            // Reachable again: recorded at once, with its event (the
            // success first: it tells whether the host was unreachable).
            let back = self.store.record_poll_success(&host.name, next_poll).await;
            self.store.touch_inventories(std::slice::from_ref(&seen)).await.map_err(|e| e.to_string())?;
            self.poll_succeeded(host, back).await;
            return Ok(Polled::Recorded);
        };
        let parsed = match parse_device_list(report.devices.get().as_bytes()) {
            Ok(parsed) => Arc::new(parsed),
            Err(e) => {
                return self
                    .poll_failed(host, now, format!("the agent at {} sent an unreadable inventory: {e}", host.addr))
                    .await
            }
        };
        let polled = PolledInventory { inv: stored(report, fingerprint, now), next_poll_at: next_poll };
        Ok(Polled::Changed(Box::new(Fresh { host: host.clone(), polled, parsed })))
    }

    /// Stores changed inventories with their hosts' polls in one
    /// transaction, then says what changed on each. A host removed since
    /// its poll is skipped. When the write fails nothing is stored: the
    /// hosts' next polls were not moved, so the next round asks again.
    async fn store_fresh(&self, batch: Vec<Fresh>) -> Result<(), crate::store::StoreError> {
        // The device lists (tens of KB each) go to the store without a copy.
        let (polled, parses): (Vec<PolledInventory>, Vec<_>) =
            batch.into_iter().map(|f| (f.polled, (f.host, f.parsed))).unzip();
        let results = self.store.put_polled_inventories(&polled).await?;
        let mut events = Vec::new();
        let mut stored = Vec::new();
        let mut wake = false;
        for ((p, (host, parsed)), result) in polled.iter().zip(parses).zip(results) {
            let Some(put) = result else { continue };
            let inv = &p.inv;
            let release_before = put.previous.as_ref().map(|p| p.ceph_release.clone());
            let before = put.previous.as_ref().and_then(|p| self.cache.cached(&host.name, &p.fingerprint));
            self.cache.insert(&host.name, &inv.fingerprint, parsed.clone());
            let (event, devices_changed) = self.inventory_change(&host, put.previous, before, &parsed);
            events.extend(event);
            wake |= devices_changed;
            events.extend(self.release_change(
                &host,
                release_before.as_ref().map(Option::as_deref),
                inv.ceph_release.as_deref(),
            ));
            if put.was_unreachable {
                events.push(self.reachable_event(&host));
            }
            self.polls.polled.note(&host.name);
            stored.push((host, parsed));
        }
        // The batch's events in one transaction, as its inventories: a cold
        // start tells 2000 first inventories, and a commit to the store in
        // RADOS costs ~13 ms (BENCHMARKS.md). The change is stored: said
        // whatever happens next.
        self.events.record_all(events).await;
        // A new disk in a held slot lifts the slot's holds before the
        // reconciler is woken: its pass sees the slot filled and every disk
        // of the replacement free, never the new disk free beside held ones.
        for (host, parsed) in stored {
            self.release_filled_slots(&host.name, &parsed).await;
        }
        // After the events: what the reconciler then does is told after
        // what it answers to.
        if wake {
            self.workers.reconciler.wake();
        }
        Ok(())
    }

    /// `store_fresh` for a round's batch: a failed write is logged here.
    async fn store_round_fresh(&self, batch: Vec<Fresh>) {
        let hosts = batch.len();
        if let Err(e) = self.store_fresh(batch).await {
            tracing::error!(hosts, "cannot store changed inventories (asked again next round): {e}");
        }
    }

    /// `recorded`: whether the host was unreachable, as recording the success said.
    async fn poll_succeeded(&self, host: &ManagedHost, recorded: Result<bool, crate::store::StoreError>) {
        match recorded {
            Ok(true) => self.events.record_all(vec![self.reachable_event(host)]).await,
            Ok(false) => {}
            Err(e) => tracing::error!(host = %host.name, "cannot record a successful poll: {e}"),
        }
        self.polls.polled.note(&host.name);
    }

    fn reachable_event(&self, host: &ManagedHost) -> NewEvent {
        self.events.host_event(EventKind::HostReachable, &host.name, format!("Host {} is reachable again", host.name))
    }

    async fn poll_failed(&self, host: &ManagedHost, now: i64, error: String) -> Result<Polled, String> {
        *self.polls.errors.lock().expect("counter lock").entry(host.name.clone()).or_default() += 1;
        let wait = self.backoff(host.consecutive_failures + 1);
        let failure =
            PollFailure { at: now, error: error.clone(), next_poll_at: next_poll_at(now, wait, draw(&host.name, now)) };
        let became_unreachable = self.store.record_poll_failure(&host.name, &failure).await;
        // Announced once stored, so that a client refetching at once sees it.
        self.polls.polled.note(&host.name);
        if let Err(e) = &became_unreachable {
            tracing::error!(host = %host.name, "cannot record a failed poll: {e}");
        }
        if let Ok(true) = became_unreachable {
            self.events
                .record(
                    Level::Warning,
                    EventKind::HostUnreachable,
                    Some(&host.name),
                    None,
                    format!("Host {} is unreachable: {error}", host.name),
                )
                .await;
        }
        Err(error)
    }

    /// What to tell of a stored inventory (None: nothing), and whether its
    /// devices changed (the reconciler has something to look at).
    /// `before`: the replaced inventory's devices, if the cache still held them.
    fn inventory_change(
        &self,
        host: &ManagedHost,
        previous: Option<Replaced>,
        before: Option<Arc<Vec<Device>>>,
        parsed: &[Device],
    ) -> (Option<NewEvent>, bool) {
        let Some(previous) = previous else {
            let available = parsed.iter().filter(|d| d.available).count();
            let message = format!("Found {} devices on {} ({available} available)", parsed.len(), host.name);
            return (Some(self.events.host_event(EventKind::InventoryFirst, &host.name, message)), true);
        };
        // The same devices (only the source or note changed): nothing to tell.
        let Some(old_text) = previous.devices else { return (None, false) };
        let before = match before {
            Some(devices) => devices,
            None => Arc::new(parse_device_list(old_text.as_bytes()).unwrap_or_default()),
        };
        let d = diff(&before, parsed);
        let event = (!d.is_empty()).then(|| {
            let message = format!("Detected new or changed devices on {}: {}", host.name, d.summary());
            self.events.host_event(EventKind::DevicesChanged, &host.name, message)
        });
        (event, true)
    }

    /// Polls every host whose next poll is due; asks to run again when the
    /// next host is due (within the worker's tick). Reads only the due hosts.
    pub async fn poll_due(&self) -> Result<Pace, DaemonError> {
        let now = now_ms();
        let due: Vec<(ManagedHost, Option<String>)> =
            self.store.due_hosts(now).await?.into_iter().map(|(h, head)| (h, head.map(|i| i.etag()))).collect();
        let seen = Mutex::new(Vec::new());
        let fresh = Mutex::new((Vec::new(), std::time::Instant::now()));
        let polled_some = !due.is_empty();
        stream::iter(due)
            // A failed poll is recorded on the host (and as an event once it
            // becomes unreachable); the round goes on with the others.
            .for_each_concurrent(self.config.poll_concurrency, |(h, known)| {
                let (seen, fresh) = (&seen, &fresh);
                async move {
                    match self.poll(&h, known).await {
                        Ok(Polled::Unchanged(s)) => {
                            let full = {
                                let mut seen = seen.lock().expect("seen lock");
                                seen.push(s);
                                (seen.len() >= TOUCH_BATCH).then(|| std::mem::take(&mut *seen))
                            };
                            if let Some(batch) = full {
                                self.touch(batch).await;
                            }
                        }
                        Ok(Polled::Changed(f)) => {
                            let mut pending = fresh.lock().expect("fresh lock");
                            if pending.0.is_empty() {
                                pending.1 = std::time::Instant::now();
                            }
                            pending.0.push(*f);
                        }
                        Ok(Polled::Recorded) => {}
                        Err(e) => tracing::debug!(host = %h.name, "poll failed: {e}"),
                    }
                    let due = {
                        let mut pending = fresh.lock().expect("fresh lock");
                        let (batch, since) = &mut *pending;
                        (!batch.is_empty() && (batch.len() >= FRESH_BATCH || since.elapsed() >= FRESH_WAIT))
                            .then(|| std::mem::take(batch))
                    };
                    if let Some(batch) = due {
                        self.store_round_fresh(batch).await;
                    }
                }
            })
            .await;
        self.touch(seen.into_inner().expect("seen lock")).await;
        self.store_round_fresh(fresh.into_inner().expect("fresh lock").0).await;
        if polled_some {
            // The cluster's releases are read again here too (at most once
            // per TTL): without the health strip open an upgrade would go
            // unseen, and the planner and the flags follow them. A failed
            // read is logged by `releases`.
            let _ = self.cluster.releases().await;
            if let Err(e) = self.note_release_flags().await {
                tracing::warn!("failed to look for hosts whose ceph-volume release changed: {e}");
            }
        }
        let now = now_ms();
        let next_due = self.store.next_poll_after(now).await?;
        let wait = next_due.map(|at| Duration::from_millis(at.saturating_sub(now).max(0) as u64));
        Ok(wait.map_or(Pace::Interval, |w| Pace::Within(w.max(MIN_TICK))))
    }

    /// Writes unchanged inventories' new times, then announces their hosts.
    async fn touch(&self, seen: Vec<InventorySeen>) {
        match self.store.touch_inventories(&seen).await {
            Ok(()) => {
                for s in &seen {
                    self.polls.polled.note(&s.host);
                    // An erasure that failed while the agent was away.
                    self.retry_erasures(&s.host).await;
                }
            }
            // Their hosts are polled again at the next round (their next
            // poll was not moved), and their inventories stay as they were.
            Err(e) => tracing::error!(hosts = seen.len(), "cannot record unchanged inventories: {e}"),
        }
    }

    /// Polls the named hosts now (`--refresh`), waiting at most `timeout`;
    /// returns the hosts that failed or did not answer in time, with why.
    pub async fn refresh(&self, names: &[String], timeout: Duration) -> Result<Vec<(String, String)>, DaemonError> {
        let hosts: Vec<ManagedHost> =
            self.store.hosts().await?.into_iter().filter(|h| names.contains(&h.name)).collect();
        let results: Vec<(String, Option<String>)> = stream::iter(hosts)
            .map(|h| async move {
                match tokio::time::timeout(timeout, self.poll_host(&h)).await {
                    Ok(Ok(())) => (h.name, None),
                    Ok(Err(e)) => (h.name, Some(e)),
                    Err(_) => (h.name, Some(format!("no answer within {} s", timeout.as_secs()))),
                }
            })
            .buffer_unordered(self.config.poll_concurrency)
            .collect()
            .await;
        Ok(results.into_iter().filter_map(|(h, e)| e.map(|e| (h, e))).collect())
    }
}

/// A fresh report as the store keeps it: its device list as the agent sent it.
fn stored(report: RawInventoryReport, fingerprint: String, now: i64) -> StoredInventory {
    StoredInventory {
        host: report.host,
        taken_at: report.taken_at_ms,
        received_at: now,
        source: report.source.as_str().to_string(),
        can_create_osds: report.can_create_osds,
        note: report.note,
        devices: String::from(Box::<str>::from(report.devices)),
        fingerprint,
        ceph_release: report.ceph_release,
    }
}
