//! `POST /v1/probe`: fio's four jobs (`wire::fio`) on a blank device, to
//! see what a disk can do before it becomes an OSD. fio writes over the
//! start of the device, so the probe needs the caller's explicit intent,
//! and runs only on a device that is blank now (`blank`): the checks are
//! made on the host right before fio starts, with the device held
//! exclusively (`exclusive`), and the hold is kept while fio runs, so no
//! mount, device-mapper table or other exclusive opener can take the disk
//! meanwhile. fio is bounded in time (each job's `--runtime`, and the
//! mode's overall bound, past which its process group is killed). Both
//! ends of the device are zeroed afterwards (as a zap zeroes them), so the
//! disk is left as blank as it was found, whatever fio wrote.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;

use crate::agent_server::disks::claim::{blkid_signatures, claim_blank, facts_of, ClaimError};
use crate::agent_server::disks::exclusive::{shown_len, wipe_ranges, ExclusiveDevice, ExclusiveError};
use crate::agent_server::disks::zap::ZapError;
use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::inventory::{Inventory, InventoryError};
use crate::agent_server::process::{self, Keep, Limits, RunError};
use crate::wire::agent::{ProbeRequest, ProbeResult};
use crate::wire::ceph_volume::same_disk;
use crate::wire::fio::{self, FioError};

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("must pass yes_i_really_mean_it: true: a probe OVERWRITES the start of the device (refused to probe {0})")]
    NoIntent(String),
    /// Not a device path, not among `--devices`, or a fixed inventory.
    #[error("{0}")]
    Target(ZapError),
    #[error("{0} is not a device in this host's current inventory")]
    NotInInventory(String),
    #[error(
        "refusing to probe {path}: the disk there now is {found:?}, not {expected:?}, the one the probe was asked \
         for; nothing was written"
    )]
    OtherDisk { path: String, expected: String, found: String },
    #[error("refusing to probe {path}: it is not blank: {}; nothing was written", .reasons.join("; "))]
    NotBlank { path: String, reasons: Vec<String> },
    #[error("{}", crate::agent_server::host_lock::BUSY)]
    AgentBusy,
    #[error("refusing to probe: {0}; nothing was written")]
    Device(ExclusiveError),
    #[error("refusing to probe {path}: {why}; nothing was written")]
    TooSmall { path: String, why: String },
    #[error("fio is not installed on this host (Debian: apt install fio); nothing was written")]
    NoFio,
    #[error("{0}")]
    Run(RunError),
    #[error("fio failed with exit status {code}: {stderr}")]
    Failed { code: i32, stderr: String },
    #[error(transparent)]
    Report(FioError),
    #[error("{0}")]
    Incomplete(String),
    #[error("the probe wrote on {path}, but zeroing its ends failed: {source}")]
    Wipe { path: String, source: ExclusiveError },
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    #[error("the probe stopped unexpectedly: {0}")]
    Task(String),
}

impl ProbeError {
    pub fn status(&self) -> StatusCode {
        match self {
            ProbeError::NoIntent(_) => StatusCode::BAD_REQUEST,
            ProbeError::Target(e) => e.status(),
            ProbeError::NotInInventory(_) => StatusCode::NOT_FOUND,
            ProbeError::OtherDisk { .. }
            | ProbeError::NotBlank { .. }
            | ProbeError::AgentBusy
            | ProbeError::TooSmall { .. }
            | ProbeError::NoFio
            | ProbeError::Device(ExclusiveError::Busy { .. } | ExclusiveError::NotBlockDevice { .. }) => {
                StatusCode::CONFLICT
            }
            ProbeError::Run(RunError::TimedOut { .. }) => StatusCode::GATEWAY_TIMEOUT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// The checks that need nothing but the request and the settings.
pub fn check_request(
    req: &ProbeRequest,
    allowed: Option<&std::collections::BTreeSet<String>>,
    fixed_file: Option<&std::path::Path>,
) -> Result<(), ProbeError> {
    if !req.yes_i_really_mean_it {
        return Err(ProbeError::NoIntent(req.path.clone()));
    }
    crate::agent_server::disks::zap::check_target(&req.path, allowed, fixed_file).map_err(ProbeError::Target)
}

/// Everything a probe needs.
pub struct Prober {
    pub inventory: Arc<Inventory>,
    pub roots: HostRoots,
    pub fio: String,
    pub blkid: String,
}

impl Prober {
    /// Probes a device. The caller has made `check_request` and holds the
    /// agent's one-command-at-a-time lock.
    pub async fn probe(&self, req: &ProbeRequest) -> Result<ProbeResult, ProbeError> {
        let started = Instant::now();
        let path = req.path.clone();
        let taken = self.inventory.take().await?;
        let Some(device) = taken.device(&path) else {
            return Err(ProbeError::NotInInventory(path));
        };
        if let Some(expected) = req.device_id.as_deref().filter(|d| !d.is_empty()) {
            let found = &*device.device_id;
            // Named by the daemon's copy of an inventory, perhaps of the
            // ceph-volume before an upgrade, which names disks differently.
            if !same_disk(found, expected) {
                return Err(ProbeError::OtherDisk { path, expected: expected.into(), found: found.into() });
            }
        }
        let mut facts = facts_of(device);
        facts.signatures = blkid_signatures(&self.blkid, &path).await;
        let mut steps = vec![format!("{path} is in the inventory taken now")];
        let roots = self.roots.clone();
        let claimed = path.clone();
        let claim = tokio::task::spawn_blocking(move || claim_blank(&claimed, &roots, facts))
            .await
            .map_err(|e| ProbeError::Task(e.to_string()))?;
        let (dev, brief) = match claim {
            Ok(c) => (c.dev, c.brief),
            Err(ClaimError::NotBlank(reasons)) => return Err(ProbeError::NotBlank { path, reasons }),
            Err(ClaimError::Device(e)) => return Err(ProbeError::Device(e)),
        };
        if !brief.is_empty() {
            steps.push(format!("{} had {path} open for a moment and let go (a scan, not a user)", brief.join(", ")));
        }
        steps.push(format!("held {path} exclusively (O_EXCL) and found it blank"));
        let region = req.mode.region(dev.size).map_err(|why| ProbeError::TooSmall { path: path.clone(), why })?;
        let args = fio::args(req.mode, &path, region);
        let command = format!("{} {}", self.fio, args.join(" "));
        let bound = Duration::from_secs(req.mode.time_bound_s());
        tracing::info!(device = %path, %command, reason = req.reason.as_deref().unwrap_or(""), "probe: running fio");
        let mut cmd = tokio::process::Command::new(&self.fio);
        cmd.args(&args).kill_on_drop(true);
        let ran = process::run(cmd, Limits { timeout: bound, max_output: 4 << 20, keep: Keep::Head }).await;
        steps.push(format!("ran {command}"));
        // Whatever fio did, the ends are zeroed before the disk is let go.
        let device_bytes = dev.size;
        let wiped = tokio::task::spawn_blocking(move || zero_ends(&dev))
            .await
            .map_err(|e| ProbeError::Task(e.to_string()))?
            .map_err(|source| ProbeError::Wipe { path: path.clone(), source })?;
        steps.extend(wiped);
        steps.push(format!("released {path}"));
        let finished = match ran {
            Ok(f) => f,
            Err(RunError::NotFound { .. }) => return Err(ProbeError::NoFio),
            Err(e) => return Err(ProbeError::Run(e)),
        };
        if !finished.status.success() {
            return Err(ProbeError::Failed { code: finished.exit_code(), stderr: finished.stderr.last_line() });
        }
        if finished.stdout.dropped > 0 {
            return Err(ProbeError::Incomplete("fio's report was longer than 4 MiB and was cut".into()));
        }
        let fio_json = finished.stdout.text();
        let parsed = fio::parse(&fio_json).map_err(ProbeError::Report)?;
        parsed.figures().map_err(ProbeError::Incomplete)?;
        tracing::info!(device = %path, steps = %steps.join("; "), "probed");
        Ok(ProbeResult {
            path: req.path.clone(),
            mode: req.mode,
            device_bytes,
            region_bytes: region,
            command,
            fio_version: parsed.version,
            jobs: parsed.jobs.into_iter().map(Into::into).collect(),
            fio_json,
            steps,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }
}

fn zero_ends(dev: &ExclusiveDevice) -> Result<Vec<String>, ExclusiveError> {
    let mut steps = Vec::new();
    for (offset, len) in wipe_ranges(dev.size) {
        dev.zero(offset, len)?;
        steps.push(format!("zeroed {} at offset {offset}", shown_len(len)));
    }
    dev.sync()?;
    steps.push("flushed the writes to the device (fsync)".to_string());
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::agent::ProbeMode;

    fn req(path: &str, intent: bool) -> ProbeRequest {
        ProbeRequest {
            path: path.into(),
            mode: ProbeMode::Quick,
            yes_i_really_mean_it: intent,
            device_id: None,
            reason: None,
        }
    }

    #[test]
    fn intent_comes_first_then_the_target() {
        let e = check_request(&req("/etc/passwd", false), None, None).unwrap_err();
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert!(e.to_string().starts_with("must pass yes_i_really_mean_it: true: a probe OVERWRITES"), "{e}");
        let e = check_request(&req("/dev/../etc/passwd", true), None, None).unwrap_err();
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        let allowed: std::collections::BTreeSet<String> = ["/dev/loop4".to_string()].into();
        let e = check_request(&req("/dev/sdb", true), Some(&allowed), None).unwrap_err();
        assert_eq!(e.status(), StatusCode::FORBIDDEN);
        let e =
            check_request(&req("/dev/loop4", true), Some(&allowed), Some(std::path::Path::new("/x.json"))).unwrap_err();
        assert_eq!(e.status(), StatusCode::CONFLICT);
        assert!(check_request(&req("/dev/loop4", true), Some(&allowed), None).is_ok());
    }

    #[test]
    fn refusals_say_nothing_was_written() {
        let e = ProbeError::NotBlank {
            path: "/dev/loop3".into(),
            reasons: vec![
                "it has a BlueStore label (osd.3)".into(),
                "it is in use: held open by ceph-osd pid 9".into(),
            ],
        };
        assert_eq!(e.status(), StatusCode::CONFLICT);
        assert_eq!(
            e.to_string(),
            "refusing to probe /dev/loop3: it is not blank: it has a BlueStore label (osd.3); \
             it is in use: held open by ceph-osd pid 9; nothing was written"
        );
    }
}
