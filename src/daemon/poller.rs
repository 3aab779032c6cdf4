//! Keeps every host's inventory fresh: polls each agent on an interval with
//! bounded concurrency and a timeout per call, backs off from failing hosts,
//! stores what it gets with its time, and records an event when devices
//! appear, disappear or change, or when a host becomes unreachable.

use crate::domain::event::{EventKind, Level};
use std::time::Duration;

use futures::stream::{self, StreamExt};

use super::{Daemon, DaemonError};
use crate::clock::now_ms;
use crate::domain::backoff::backoff;
use crate::domain::inventory_diff::diff;
use crate::store::{PollFailure, StoredInventory};
use crate::wire::api::hosts::Host;
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
        backoff(self.config.poll_interval, self.config.max_backoff, failures.clamp(0, 64) as u32)
    }

    /// Polls one host now. Returns the error text when the poll failed.
    #[tracing::instrument(skip_all, fields(host = %host.name))]
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
                // The change is stored: say so whatever happens next.
                self.note_inventory_change(host, previous, &parsed, &inv).await;
                let next_poll = now + self.config.poll_interval.as_millis() as i64;
                match self.store.record_poll_success(&host.name, next_poll).await {
                    Ok(true) => {
                        self.event(
                            Level::Info,
                            EventKind::HostReachable,
                            Some(&host.name),
                            None,
                            format!("Host {} is reachable again", host.name),
                        )
                        .await
                    }
                    Ok(false) => {}
                    Err(e) => tracing::error!(host = %host.name, "cannot record a successful poll: {e}"),
                }
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
                if let Err(e) = &became_unreachable {
                    tracing::error!(host = %host.name, "cannot record a failed poll: {e}");
                }
                if let Ok(true) = became_unreachable {
                    self.event(
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
                    EventKind::InventoryFirst,
                    Some(&host.name),
                    None,
                    format!("Found {} devices on {} ({available} available)", parsed.len(), host.name),
                )
                .await;
                self.reconciler.wake();
            }
            Some(prev) if prev.fingerprint != inv.fingerprint => {
                let before = parse_device_list(prev.devices.as_bytes()).unwrap_or_default();
                let d = diff(&before, parsed);
                if !d.is_empty() {
                    self.event(
                        Level::Info,
                        EventKind::DevicesChanged,
                        Some(&host.name),
                        None,
                        format!("Detected new or changed devices on {}: {}", host.name, d.summary()),
                    )
                    .await;
                }
                self.reconciler.wake();
            }
            Some(_) => {}
        }
    }

    /// Polls every host whose next poll is due.
    pub async fn poll_due(&self) -> Result<(), DaemonError> {
        let now = now_ms();
        let due: Vec<Host> = self.store.hosts().await?.into_iter().filter(|h| h.next_poll_at <= now).collect();
        stream::iter(due)
            // A failed poll is recorded on the host (and as an event once it
            // becomes unreachable); the round goes on with the others.
            .for_each_concurrent(self.config.poll_concurrency, |h| async move {
                if let Err(e) = self.poll_host(&h).await {
                    tracing::debug!(host = %h.name, "poll failed: {e}");
                }
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
