//! Keeps every host's inventory fresh: polls each agent on an interval with
//! bounded concurrency and a timeout per call, backs off from failing hosts,
//! stores what it gets with its time, and records an event when devices
//! appear, disappear or change, or when a host becomes unreachable.

use std::sync::Arc;
use std::time::Duration;

use futures::stream::{self, StreamExt};
use tokio_util::sync::CancellationToken;

use super::{Daemon, DaemonError};
use crate::clock::now_ms;
use crate::domain::inventory_diff::diff;
use crate::store::{Host, Level, PollFailure, StoredInventory};
use crate::wire::ceph_volume::parse_device_list;

/// FNV-1a of the device list: stable across runs and versions.
pub fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl Daemon {
    fn backoff(&self, failures: i64) -> Duration {
        let base = self.config.poll_interval;
        let factor = 1u32 << failures.clamp(0, 10);
        (base * factor).min(self.config.max_backoff)
    }

    /// Polls one host now. Returns the error text when the poll failed.
    pub async fn poll_host(&self, host: &Host) -> Result<(), String> {
        let lock = self.poll_lock(&host.name).await;
        let _guard = lock.lock().await;
        let outcome = match self.agents.inventory(host).await {
            Ok(report) if report.host != host.name => Err(format!(
                "the agent at {} says it runs on host {:?}, not {:?}; fix the address with `host rm` and `host add`",
                host.addr, report.host, host.name
            )),
            Ok(report) => {
                let devices = serde_json::to_string(&report.devices).expect("JSON values serialize");
                match parse_device_list(devices.as_bytes()) {
                    Ok(parsed) => Ok((report, devices, parsed)),
                    Err(e) => Err(format!("the agent at {} sent an unreadable inventory: {e}", host.addr)),
                }
            }
            Err(e) => Err(e.to_string()),
        };
        let now = now_ms();
        match outcome {
            Ok((report, devices, parsed)) => {
                let inv = StoredInventory {
                    host: host.name.clone(),
                    taken_at: report.taken_at_ms,
                    received_at: now,
                    source: serde_json::to_value(report.source)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    can_create_osds: report.can_create_osds,
                    note: report.note,
                    fingerprint: fingerprint(&devices),
                    devices,
                };
                let previous = self.store.put_inventory(&inv).await.map_err(|e| e.to_string())?;
                let was_unreachable = self
                    .store
                    .record_poll_success(&host.name, now + self.config.poll_interval.as_millis() as i64)
                    .await
                    .map_err(|e| e.to_string())?;
                if was_unreachable {
                    self.event(
                        Level::Info,
                        "host-reachable",
                        Some(&host.name),
                        None,
                        format!("Host {} is reachable again", host.name),
                    )
                    .await;
                }
                self.note_inventory_change(host, previous, &parsed, &inv).await;
                self.polled.note(&host.name);
                Ok(())
            }
            Err(error) => {
                *self.poll_errors.lock().expect("counter lock").entry(host.name.clone()).or_default() += 1;
                let failure = PollFailure {
                    at: now,
                    error: error.clone(),
                    next_poll_at: now + self.backoff(host.consecutive_failures + 1).as_millis() as i64,
                };
                let became_unreachable = self.store.record_poll_failure(&host.name, &failure).await;
                // Announced once stored, so that a client refetching at once sees it.
                self.polled.note(&host.name);
                if let Ok(true) = became_unreachable {
                    self.event(
                        Level::Warning,
                        "host-unreachable",
                        Some(&host.name),
                        None,
                        format!("Host {} is unreachable: {error}", host.name),
                    )
                    .await;
                }
                Err(error)
            }
        }
    }

    async fn note_inventory_change(
        &self,
        host: &Host,
        previous: Option<StoredInventory>,
        parsed: &[crate::domain::inventory::Device],
        inv: &StoredInventory,
    ) {
        match previous {
            None => {
                let available = parsed.iter().filter(|d| d.available).count();
                self.event(
                    Level::Info,
                    "inventory-first",
                    Some(&host.name),
                    None,
                    format!("Found {} devices on {} ({available} available)", parsed.len(), host.name),
                )
                .await;
                self.reconcile_now.notify_one();
            }
            Some(prev) if prev.fingerprint != inv.fingerprint => {
                let before = parse_device_list(prev.devices.as_bytes()).unwrap_or_default();
                let d = diff(&before, parsed);
                if !d.is_empty() {
                    self.event(
                        Level::Info,
                        "devices-changed",
                        Some(&host.name),
                        None,
                        format!("Detected new or changed devices on {}: {}", host.name, d.summary()),
                    )
                    .await;
                }
                self.reconcile_now.notify_one();
            }
            Some(_) => {}
        }
    }

    /// Polls every host whose next poll is due.
    pub async fn poll_due(&self) -> Result<(), DaemonError> {
        let now = now_ms();
        let due: Vec<Host> = self.store.hosts().await?.into_iter().filter(|h| h.next_poll_at <= now).collect();
        stream::iter(due)
            .for_each_concurrent(self.config.poll_concurrency, |h| async move {
                let _ = self.poll_host(&h).await;
            })
            .await;
        Ok(())
    }

    /// Polls the named hosts now (`--refresh`), waiting at most `timeout`;
    /// returns the hosts that failed or did not answer in time, with why.
    pub async fn refresh(&self, names: &[String], timeout: Duration) -> Result<Vec<(String, String)>, DaemonError> {
        let hosts: Vec<Host> = self.store.hosts().await?.into_iter().filter(|h| names.contains(&h.name)).collect();
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

/// The poller loop: checks for due hosts every second until cancelled.
pub async fn run(daemon: Arc<Daemon>, cancel: CancellationToken) {
    loop {
        if let Err(e) = daemon.poll_due().await {
            tracing::error!("inventory poll round failed: {e}");
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}
