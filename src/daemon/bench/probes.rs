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

use super::probe_kind::ProbeKind;
use super::Benchmarks;
use crate::agent_client::AgentError;
use crate::clock::now_ms;
use crate::daemon::operations::Executor;
use crate::daemon::{audit, live, DaemonError, Pace};
use crate::domain::event::{EventKind, Level};
use crate::domain::operation::{NewOperation, Operation, Outcome};
use crate::domain::probe::aliases::with_aliases;
use crate::domain::probe::outliers::{slow_disks, ProbedDisk};
use crate::domain::probe::run::{Probe, ProbePhase, ProbeRun};
use crate::domain::probe::{DiskKey, ProbeDone, ProbeFigures, ProbeMode, ProbeStatus};
use crate::store::{ProbeCodec, Store};
use crate::wire::agent::ProbeRequest;
use crate::wire::api::probes::{DiskProbe, ProbeQuery, ProbeState};

impl Benchmarks {
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
        let (_, device) = self.inventory.known_device(host_name, path).await?;
        let active = self.inventory.active_osds_on(host_name, path, &device).await?;
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
        let probe = Probe {
            key: key.clone(),
            path: path.to_string(),
            device_id: Some(device.device_id.to_string()).filter(|d| !d.is_empty()),
            device_class: Some(device.human_type().to_string()),
            size_bytes: device.size_bytes.map(|b| b as u64),
            model: Some(device.model().to_string()).filter(|m| !m.is_empty()),
            mode,
            phase: ProbePhase::Queued,
            started_at: None,
            figures: None,
            jobs: Vec::new(),
            command: None,
            steps: Vec::new(),
            error: None,
        };
        let new = NewOperation {
            subject: key.stored(),
            host: Some(host_name.to_string()),
            state: probe,
            actor: audit::actor(),
        };
        let busy = |_: &str| format!("disk {} already has a probe queued or running", key.shown());
        let op = self.store.ops::<ProbeCodec>().add(&[new], now_ms(), busy, |_, _| {}).await?.remove(0);
        let probe = disk_probe(&op, None);
        let slot = if key.by_slot() { " (no serial/WWN: the results stay with the slot)" } else { "" };
        self.events
            .record(
                Level::Info,
                EventKind::ProbeRequested,
                Some(host_name),
                Some(path),
                format!(
                    "Queued a {} probe of {path} on {host_name}{slot}: fio will overwrite its start",
                    mode.as_str()
                ),
            )
            .await;
        self.worker.wake();
        Ok(probe)
    }

    /// Runs every queued probe: hosts in parallel, one probe per host at a time.
    pub(super) async fn run_disk_probes(self: &Arc<Self>) -> Result<Pace, DaemonError> {
        let kind = ProbeKind { b: self.clone() };
        Executor::new(kind, self.store.clone(), self.backoff).round().await
    }

    pub(super) async fn where_probed(&self, key: &str) -> (Option<String>, Option<String>) {
        match self.store.ops::<ProbeCodec>().latest_on(key).await {
            Ok(Some(op)) => (op.host, Some(op.state.path)),
            Ok(None) => (None, None),
            Err(e) => {
                tracing::warn!("cannot read the probes: {e}");
                (None, None)
            }
        }
    }

    /// fio on the disk through its agent.
    pub(super) async fn run_fio(&self, op: &Operation<Probe>) -> Outcome<(ProbeRun, Option<String>)> {
        let p = &op.state;
        let host_name = op.host.clone().unwrap_or_default();
        let host = match self.store.host(&host_name).await {
            Ok(h) => h,
            Err(e) => return Outcome::Failed(format!("cannot probe: {e}")),
        };
        self.events.notify(live::Live::Hosts { hosts: vec![host_name.clone()] });
        let req = ProbeRequest {
            path: p.path.clone(),
            mode: p.mode,
            yes_i_really_mean_it: true,
            device_id: p.device_id.clone(),
            reason: Some(format!(
                "probe {} asked by {}",
                op.number,
                op.actor.as_deref().unwrap_or("the bootstrap token")
            )),
        };
        match self.agents.probe(&host, &req).await {
            Ok(r) => {
                let jobs: Vec<_> = r.jobs.into_iter().map(Into::into).collect();
                match ProbeFigures::from_jobs(&jobs) {
                    Ok(figures) => {
                        let run = ProbeRun { figures, jobs, command: r.command, steps: r.steps };
                        Outcome::Done((run, Some(r.fio_json).filter(|f| !f.is_empty())))
                    }
                    Err(e) => Outcome::Failed(format!("the agent's answer: {e}")),
                }
            }
            // Another disk command runs on the host: fio did not start. Tried again next round.
            Err(e) if e.is_busy() => Outcome::Unknown(format!("the agent on {host_name} is busy: {e}")),
            Err(AgentError::Refused { message, .. }) => {
                Outcome::Failed(format!("the agent on {host_name} refused: {message}"))
            }
            Err(e) if e.outcome_unknown() => {
                Outcome::Failed(format!("{e}; fio may have run on the disk: ask for a new probe to know"))
            }
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }

    /// Each disk's latest probe (or, with `history`, the last probes,
    /// newest first), with the outlier verdict on each disk's latest
    /// finished one.
    pub async fn disk_probes(&self, q: &ProbeQuery) -> Result<Vec<DiskProbe>, DaemonError> {
        let mut rows = match q.history {
            Some(n) => {
                let ops = self.store.ops::<ProbeCodec>().latest(n.clamp(0, 10_000)).await?;
                ops.iter().map(|o| disk_probe(o, None)).collect()
            }
            None => latest_each(current_disk_probes(&self.store).await?),
        };
        if let Some(host) = &q.host {
            rows.retain(|p| p.host == *host);
        }
        self.mark_outliers(&mut rows).await?;
        Ok(rows)
    }

    /// One probe, with fio's report.
    pub async fn disk_probe(&self, number: i64) -> Result<DiskProbe, DaemonError> {
        let op = self.store.ops::<ProbeCodec>().get(number).await?;
        let fio = self.store.latest_action(op.id, "probe").await?.and_then(|a| a.output);
        let mut p = vec![disk_probe(&op, fio)];
        self.mark_outliers(&mut p).await?;
        Ok(p.remove(0))
    }

    async fn mark_outliers(&self, rows: &mut [DiskProbe]) -> Result<(), DaemonError> {
        let slow = slow_probed_disks(&self.store).await?;
        let latest: HashSet<i64> =
            latest_done(current_disk_probes(&self.store).await?).into_iter().map(|p| p.probe_id).collect();
        for r in rows.iter_mut().filter(|r| latest.contains(&r.probe_id)) {
            r.outlier = disk_key(r).and_then(|k| slow.get(&k.stored()).cloned());
        }
        Ok(())
    }
}

/// A probe as the API shows it.
fn disk_probe(op: &Operation<Probe>, fio_json: Option<String>) -> DiskProbe {
    let p = &op.state;
    DiskProbe {
        probe_id: op.number,
        host: op.host.clone().unwrap_or_default(),
        path: p.path.clone(),
        disk: p.key.shown(),
        by_slot: p.key.by_slot(),
        device_id: p.device_id.clone(),
        device_class: p.device_class.clone(),
        size_bytes: p.size_bytes,
        model: p.model.clone(),
        mode: p.mode,
        state: match p.phase {
            ProbePhase::Queued => ProbeState::Queued,
            ProbePhase::Running => ProbeState::Running,
            ProbePhase::Done => ProbeState::Done,
            ProbePhase::Failed => ProbeState::Failed,
        },
        requested_at: op.created_at,
        started_at: p.started_at,
        finished_at: op.finished_at,
        figures: p.figures.map(Into::into),
        jobs: p.jobs.iter().copied().map(Into::into).collect(),
        command: p.command.clone(),
        steps: p.steps.clone(),
        error: p.error.clone(),
        actor: op.actor.clone(),
        outlier: None,
        fio_json,
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

/// The disks far below comparable ones, by stored disk key, with why,
/// from each disk's latest finished probe.
pub(super) async fn slow_probed_disks(store: &Store) -> Result<HashMap<String, String>, DaemonError> {
    let latest: Vec<DiskProbe> = latest_done(current_disk_probes(store).await?);
    let probed: Vec<ProbedDisk> = latest
        .iter()
        .filter_map(|p| {
            Some(ProbedDisk {
                name: format!("{}:{}", p.host, p.path),
                class: p.device_class.clone().filter(|c| c != "unknown"),
                size_bytes: p.size_bytes,
                mode: p.mode,
                figures: p.figures?.into(),
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
pub async fn probe_statuses(store: &Store) -> Result<HashMap<String, Arc<ProbeStatus>>, DaemonError> {
    let current = current_disk_probes(store).await?;
    let slow = slow_probed_disks(store).await?;
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
                    figures: figures.into(),
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
    let mut out: HashMap<String, Arc<ProbeStatus>> = out.into_iter().map(|(k, v)| (k, Arc::new(v))).collect();
    with_aliases(&mut out);
    Ok(out)
}

/// Each disk's probes that matter now (its latest, and its latest
/// finished one when older), oldest first.
async fn current_disk_probes(store: &Store) -> Result<Vec<DiskProbe>, DaemonError> {
    Ok(store.ops::<ProbeCodec>().current().await?.iter().map(|o| disk_probe(o, None)).collect())
}
