//! `device probe`: fio on a blank disk before it becomes an OSD, through
//! the disk's agent, on the benchmark worker (hosts in parallel, one probe
//! per host at a time: the agent runs one disk command at a time anyway).
//! The operator's intent (`--yes-i-really-mean-it`) and the probe are
//! stored before any agent is asked; the probe is marked `running` before
//! the agent is asked to run fio; one a restart cut off is marked failed,
//! never run again. Results are kept per disk (`domain::probe::DiskKey`),
//! judged against comparable disks (`domain::probe::outliers`), and read
//! by the planner for specs with `osdkeeper.probe`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::agent_client::AgentError;
use crate::clock::now_ms;
use crate::daemon::{audit, live, Daemon, DaemonError};
use crate::domain::event::{EventKind, Level};
use crate::domain::probe::outliers::{slow_disks, ProbedDisk};
use crate::domain::probe::{DiskKey, ProbeDone, ProbeFigures, ProbeMode, ProbeStatus};
use crate::store::NewProbe;
use crate::wire::agent::ProbeRequest;
use crate::wire::api::probes::{DiskProbe, ProbeQuery, ProbeState};

const INTERRUPTED: &str =
    "the daemon stopped while this probe ran; it is not run again (fio may have written on the disk; ask for a new probe)";

impl Daemon {
    /// `device probe HOST PATH [--quick|--full] --yes-i-really-mean-it`:
    /// refused without the intent, for an unknown host or device, and for
    /// a device that is not blank by its last inventory or that holds an
    /// OSD the cluster still has; the agent checks again, on the host,
    /// right before fio runs.
    pub async fn schedule_probe(
        &self,
        host_name: &str,
        path: &str,
        mode: Option<ProbeMode>,
        intent: bool,
    ) -> Result<DiskProbe, DaemonError> {
        if !intent {
            return Err(DaemonError::Invalid(format!(
                "must pass --yes-i-really-mean-it (yes_i_really_mean_it: true): a probe OVERWRITES the start of \
                 {path} (it runs on blank devices only)"
            )));
        }
        let mode = mode.unwrap_or(ProbeMode::Quick);
        let (_, device) = self.known_device(host_name, path).await?;
        let active = self.active_osds_on(host_name, path, &device).await?;
        if !active.is_empty() {
            return Err(DaemonError::RefusedUnsafe(format!(
                "refusing to probe {path} on {host_name}: {} has its data on it",
                active.join(", ")
            )));
        }
        let mut not_blank: Vec<String> = device.rejected_reasons.iter().map(|r| r.to_string()).collect();
        if !device.lvs.is_empty() {
            not_blank.push(format!("{} logical volume(s) on it", device.lvs.len()));
        }
        if device.ceph_device && not_blank.is_empty() {
            not_blank.push("a Ceph device".into());
        }
        if !device.available || !not_blank.is_empty() {
            return Err(DaemonError::RefusedUnsafe(format!(
                "refusing to probe {path} on {host_name}: its inventory says it is not blank ({}); a probe \
                 overwrites the disk, so it runs on blank disks only",
                if not_blank.is_empty() { "unavailable".to_string() } else { not_blank.join(", ") }
            )));
        }
        let key = DiskKey::of(host_name, path, &device.device_id);
        let new = NewProbe {
            key: key.clone(),
            host: host_name.to_string(),
            path: path.to_string(),
            device_id: Some(device.device_id.to_string()),
            device_class: Some(device.human_type().to_string()),
            size_bytes: device.size_bytes.map(|b| b as u64),
            model: Some(device.model().to_string()).filter(|m| !m.is_empty()),
            mode,
        };
        let actor = audit::actor();
        let probe = self.store.add_disk_probe(&new, actor.as_deref(), now_ms()).await?;
        let slot = if key.by_slot() { " (no serial/WWN: the results stay with the slot)" } else { "" };
        self.event(
            Level::Info,
            EventKind::ProbeRequested,
            Some(host_name),
            Some(path),
            format!("Queued a {} probe of {path} on {host_name}{slot}: fio will overwrite its start", mode.as_str()),
        )
        .await;
        self.bencher.wake();
        Ok(probe)
    }

    /// Runs every queued probe: hosts in parallel, one probe per host at a time.
    pub(super) async fn run_disk_probes(&self) -> Result<(), DaemonError> {
        // A step runs to its end before the next begins, so a probe still
        // `running` now was cut off by a restart of the daemon.
        for p in self.store.interrupt_disk_probes(INTERRUPTED, now_ms()).await? {
            self.event(
                Level::Warning,
                EventKind::ProbeFailed,
                Some(&p.host),
                Some(&p.path),
                format!("probe {} of {} on {}: {INTERRUPTED}", p.probe_id, p.path, p.host),
            )
            .await;
        }
        let queued = self.store.disk_probes_in(ProbeState::Queued).await?;
        if queued.is_empty() {
            return Ok(());
        }
        let mut by_host: BTreeMap<String, Vec<DiskProbe>> = BTreeMap::new();
        for p in queued {
            by_host.entry(p.host.clone()).or_default().push(p);
        }
        let before: HashSet<String> = self.slow_probed_disks().await?.into_keys().collect();
        let runs = by_host.into_values().map(|probes| self.probe_host(probes));
        for outcome in futures::future::join_all(runs).await {
            outcome?;
        }
        for (key, message) in self.slow_probed_disks().await? {
            if !before.contains(&key) {
                let (host, path) = self.where_probed(&key).await;
                self.event(Level::Warning, EventKind::ProbeOutlier, host.as_deref(), path.as_deref(), message).await;
            }
        }
        // A finished probe may let a gated spec go on.
        self.reconciler.wake();
        Ok(())
    }

    async fn where_probed(&self, key: &str) -> (Option<String>, Option<String>) {
        match self.store.current_disk_probes().await {
            Ok(all) => all
                .into_iter()
                .rev()
                .find(|p| disk_key(p).is_some_and(|k| k.stored() == key))
                .map_or((None, None), |p| (Some(p.host), Some(p.path))),
            Err(e) => {
                tracing::warn!("cannot read the probes: {e}");
                (None, None)
            }
        }
    }

    /// One host's probes, one after the other.
    async fn probe_host(&self, probes: Vec<DiskProbe>) -> Result<(), DaemonError> {
        for p in probes {
            let host = match self.store.host(&p.host).await {
                Ok(h) => h,
                Err(e) => {
                    let why = format!("cannot probe: {e}");
                    self.store.finish_disk_probe(p.probe_id, Err(why.clone()), now_ms()).await?;
                    self.event(Level::Error, EventKind::ProbeFailed, Some(&p.host), Some(&p.path), why).await;
                    continue;
                }
            };
            if !self.store.start_disk_probe(p.probe_id, now_ms()).await? {
                continue;
            }
            self.notify(live::Live::Hosts { hosts: vec![p.host.clone()] });
            let req = ProbeRequest {
                path: p.path.clone(),
                mode: p.mode,
                yes_i_really_mean_it: true,
                device_id: p.device_id.clone(),
                reason: Some(format!(
                    "probe {} asked by {}",
                    p.probe_id,
                    p.actor.as_deref().unwrap_or("the bootstrap token")
                )),
            };
            let span = tracing::info_span!("disk_probe", probe = p.probe_id, host = %p.host, path = %p.path);
            let answer = tracing::Instrument::instrument(self.agents.probe(&host, &req), span).await;
            if answer.as_ref().err().is_some_and(AgentError::is_busy) {
                // Another disk command runs on the host: fio did not start. Tried again next round.
                tracing::info!(probe = p.probe_id, host = %p.host, "the agent is busy; the probe waits for the next round");
                self.store.requeue_disk_probe(p.probe_id).await?;
                continue;
            }
            let outcome = match &answer {
                Ok(r) => {
                    ProbeFigures::from_jobs(&r.jobs).map(|f| (r, f)).map_err(|e| format!("the agent's answer: {e}"))
                }
                Err(AgentError::Refused { message, .. }) => Err(format!("the agent on {} refused: {message}", p.host)),
                Err(e) if e.outcome_unknown() => {
                    Err(format!("{e}; fio may have run on the disk: ask for a new probe to know"))
                }
                Err(e) => Err(e.to_string()),
            };
            let subject = format!("probe {} of {} on {}", p.probe_id, p.path, p.host);
            let done = self.store.finish_disk_probe(p.probe_id, outcome, now_ms()).await?;
            match (&done.state, &done.figures) {
                (ProbeState::Done, Some(f)) => {
                    let message = format!("{subject} ({}): {}", p.mode.as_str(), f.summary());
                    self.event(Level::Info, EventKind::ProbeFinished, Some(&p.host), Some(&p.path), message).await;
                }
                _ => {
                    let message =
                        format!("{subject} failed: {}", done.error.as_deref().unwrap_or("no reason recorded"));
                    self.event(Level::Error, EventKind::ProbeFailed, Some(&p.host), Some(&p.path), message).await;
                }
            }
            self.notify(live::Live::Hosts { hosts: vec![p.host.clone()] });
        }
        Ok(())
    }

    /// The disks far below comparable ones, by stored disk key, with why,
    /// from each disk's latest finished probe.
    async fn slow_probed_disks(&self) -> Result<HashMap<String, String>, DaemonError> {
        let latest: Vec<DiskProbe> = latest_done(self.store.current_disk_probes().await?);
        let probed: Vec<ProbedDisk> = latest
            .iter()
            .filter_map(|p| {
                Some(ProbedDisk {
                    name: format!("{}:{}", p.host, p.path),
                    class: p.device_class.clone().filter(|c| c != "unknown"),
                    size_bytes: p.size_bytes,
                    mode: p.mode,
                    figures: p.figures?,
                })
            })
            .collect();
        let with_figures: Vec<&DiskProbe> = latest.iter().filter(|p| p.figures.is_some()).collect();
        Ok(slow_disks(&probed)
            .into_iter()
            .filter_map(|(i, message)| Some((disk_key(with_figures[i])?.stored(), message)))
            .collect())
    }

    /// What each disk's probes say, by stored disk key, for the planner and
    /// the device listing.
    pub(crate) async fn probe_statuses(&self) -> Result<HashMap<String, Arc<ProbeStatus>>, DaemonError> {
        let current = self.store.current_disk_probes().await?;
        let slow = self.slow_probed_disks().await?;
        let mut out: HashMap<String, ProbeStatus> = HashMap::new();
        // Oldest first: a later probe of a disk overrides what an earlier said.
        for p in current {
            let Some(key) = disk_key(&p) else { continue };
            let key = key.stored();
            let status = out.entry(key.clone()).or_default();
            match p.state {
                ProbeState::Queued | ProbeState::Running => status.pending = true,
                ProbeState::Done => {
                    status.pending = false;
                    status.failure = None;
                    status.done = p.figures.map(|figures| ProbeDone {
                        probe_id: p.probe_id,
                        mode: p.mode,
                        figures,
                        finished_at: p.finished_at.unwrap_or(p.requested_at),
                        outlier: slow.get(&key).cloned(),
                    });
                }
                ProbeState::Failed => {
                    status.pending = false;
                    status.failure = p.error.clone();
                }
            }
        }
        Ok(out.into_iter().map(|(k, v)| (k, Arc::new(v))).collect())
    }

    /// Each disk's latest probe (or, with `history`, the last probes,
    /// newest first), with the outlier verdict on each disk's latest
    /// finished one.
    pub async fn disk_probes(&self, q: &ProbeQuery) -> Result<Vec<DiskProbe>, DaemonError> {
        let mut rows = match q.history {
            Some(n) => self.store.disk_probe_history(n.clamp(0, 10_000)).await?,
            None => latest_each(self.store.current_disk_probes().await?),
        };
        if let Some(host) = &q.host {
            rows.retain(|p| p.host == *host);
        }
        self.mark_outliers(&mut rows).await?;
        Ok(rows)
    }

    /// One probe, with fio's report.
    pub async fn disk_probe(&self, id: i64) -> Result<DiskProbe, DaemonError> {
        let mut p = vec![self.store.disk_probe(id).await?];
        self.mark_outliers(&mut p).await?;
        Ok(p.remove(0))
    }

    async fn mark_outliers(&self, rows: &mut [DiskProbe]) -> Result<(), DaemonError> {
        let slow = self.slow_probed_disks().await?;
        let latest: HashSet<i64> =
            latest_done(self.store.current_disk_probes().await?).into_iter().map(|p| p.probe_id).collect();
        for r in rows.iter_mut().filter(|r| latest.contains(&r.probe_id)) {
            r.outlier = disk_key(r).and_then(|k| slow.get(&k.stored()).cloned());
        }
        Ok(())
    }
}

/// The key a stored probe was made under.
fn disk_key(p: &DiskProbe) -> Option<DiskKey> {
    Some(if p.by_slot {
        DiskKey::Slot { host: p.host.clone(), path: p.path.clone() }
    } else {
        DiskKey::Id(p.device_id.clone()?)
    })
}

/// Of each disk's current probes (oldest first), its latest finished one.
fn latest_done(current: Vec<DiskProbe>) -> Vec<DiskProbe> {
    let mut by_disk: BTreeMap<Option<DiskKey>, DiskProbe> = BTreeMap::new();
    for p in current.into_iter().filter(|p| p.state == ProbeState::Done) {
        by_disk.insert(disk_key(&p), p);
    }
    by_disk.into_values().collect()
}

/// Of each disk's current probes (oldest first), its latest one, newest first.
fn latest_each(current: Vec<DiskProbe>) -> Vec<DiskProbe> {
    let mut by_disk: BTreeMap<Option<DiskKey>, DiskProbe> = BTreeMap::new();
    for p in current {
        by_disk.insert(disk_key(&p), p);
    }
    let mut out: Vec<DiskProbe> = by_disk.into_values().collect();
    out.sort_by_key(|p| std::cmp::Reverse(p.probe_id));
    out
}
