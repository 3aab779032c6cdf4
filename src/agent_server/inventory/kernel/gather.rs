//! Runs the host's tools (lsblk, blkid, pvs) and the kernel reader over
//! the real `/sys/block` and `/dev`. blkid and pvs are optional: without
//! them the reader works from lsblk and the on-disk signatures alone.

use std::collections::{BTreeSet, HashMap};
use std::sync::Once;
use std::time::Duration;

use serde_json::Value;

use super::{candidates, probe_paths, report, Blkid, KernelFacts, KernelPaths, Lsblk, LsblkError, LvmFacts};
use crate::agent_server::process::{self, Keep, Limits, RunError};

/// The programs to run and how long each may take.
#[derive(Debug, Clone)]
pub struct Tools {
    pub lsblk: String,
    pub blkid: String,
    pub pvs: String,
    pub timeout: Duration,
}

impl Default for Tools {
    fn default() -> Self {
        Tools { lsblk: "lsblk".into(), blkid: "blkid".into(), pvs: "pvs".into(), timeout: Duration::from_secs(60) }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("could not list the block devices in {path}: {source}")]
    ListDevices { path: String, source: std::io::Error },
    #[error("lsblk failed: {0}")]
    LsblkRun(RunError),
    #[error("lsblk exited with status {code}: {stderr}")]
    LsblkExit { code: i32, stderr: String },
    #[error(transparent)]
    LsblkOutput(#[from] LsblkError),
    #[error("the device scan stopped unexpectedly: {0}")]
    Task(String),
}

/// One scan of the kernel's view.
#[derive(Debug)]
pub struct KernelScan {
    pub devices: Vec<Value>,
    /// Paths of `wanted` that the kernel does not know.
    pub missing: Vec<String>,
}

/// Scans the host. With `wanted`, only those devices are listed, probed
/// and read.
pub async fn scan(
    paths: &KernelPaths,
    tools: &Tools,
    wanted: Option<&BTreeSet<String>>,
) -> Result<KernelScan, KernelError> {
    let list = {
        let (sys_block, dev, wanted) = (paths.sys_block.clone(), paths.dev.clone(), wanted.cloned());
        tokio::task::spawn_blocking(move || candidates(&sys_block, &dev, wanted.as_ref()))
            .await
            .map_err(|e| KernelError::Task(e.to_string()))?
            .map_err(|source| KernelError::ListDevices { path: paths.sys_block.display().to_string(), source })?
    };
    let missing: Vec<String> = match wanted {
        Some(w) => w.iter().filter(|p| !list.iter().any(|c| &c.path == *p)).cloned().collect(),
        None => Vec::new(),
    };
    let lsblk = run_lsblk(tools).await?;
    let blkid = run_blkid(paths, tools, &probe_paths(&list)).await;
    let lvm = run_pvs(tools).await;
    let facts = KernelFacts { lsblk, blkid, lvm };
    let paths = paths.clone();
    let devices = tokio::task::spawn_blocking(move || report(&paths, &list, &facts))
        .await
        .map_err(|e| KernelError::Task(e.to_string()))?;
    Ok(KernelScan { devices, missing })
}

fn limits(tools: &Tools) -> Limits {
    Limits { timeout: tools.timeout, max_output: 64 << 20, keep: Keep::Head }
}

async fn run_lsblk(tools: &Tools) -> Result<Lsblk, KernelError> {
    let mut cmd = tokio::process::Command::new(&tools.lsblk);
    cmd.args(["--json", "--bytes", "--output-all"]).kill_on_drop(true);
    let out = process::run(cmd, limits(tools)).await.map_err(KernelError::LsblkRun)?;
    if !out.status.success() {
        return Err(KernelError::LsblkExit { code: out.exit_code(), stderr: out.stderr.last_line() });
    }
    Ok(Lsblk::parse(&out.stdout.bytes)?)
}

static BLKID_MISSING: Once = Once::new();
static PVS_MISSING: Once = Once::new();

/// `blkid -p` on every path in one run; it exits with 2 when a device has
/// no signature at all, which is no failure here.
async fn run_blkid(paths: &KernelPaths, tools: &Tools, devices: &[String]) -> Blkid {
    if devices.is_empty() {
        return Blkid::default();
    }
    let nodes: HashMap<String, &String> =
        devices.iter().map(|d| (paths.node(d).to_string_lossy().into_owned(), d)).collect();
    let mut cmd = tokio::process::Command::new(&tools.blkid);
    cmd.args(["-c", "/dev/null", "-p", "-o", "export"]).args(nodes.keys()).kill_on_drop(true);
    match process::run(cmd, limits(tools)).await {
        Ok(out) => {
            if !matches!(out.exit_code(), 0 | 2) {
                tracing::debug!(code = out.exit_code(), stderr = %out.stderr.last_line(), "blkid reported errors");
            }
            let raw = Blkid::parse_export(&out.stdout.text());
            let by_path = raw
                .by_path
                .into_iter()
                .filter_map(|(node, info)| nodes.get(&node).map(|p| ((*p).clone(), info)))
                .collect();
            Blkid { by_path }
        }
        Err(e @ RunError::NotFound { .. }) => {
            BLKID_MISSING.call_once(|| tracing::warn!("{e}; filesystems are seen only through lsblk"));
            Blkid::default()
        }
        Err(e) => {
            tracing::warn!("blkid failed: {e}; filesystems are seen only through lsblk");
            Blkid::default()
        }
    }
}

async fn run_pvs(tools: &Tools) -> Option<LvmFacts> {
    let mut cmd = tokio::process::Command::new(&tools.pvs);
    cmd.args(super::lvm::PVS_ARGS).env("LVM_SUPPRESS_FD_WARNINGS", "1").kill_on_drop(true);
    let failed = |why: String| {
        tracing::warn!("pvs failed ({why}); LVM is seen only through LVM2_member signatures");
        None
    };
    match process::run(cmd, limits(tools)).await {
        Ok(out) if out.status.success() => match LvmFacts::parse_pvs_json(&out.stdout.bytes) {
            Ok(f) => Some(f),
            Err(e) => failed(e.to_string()),
        },
        Ok(out) => failed(format!("exit status {}: {}", out.exit_code(), out.stderr.last_line())),
        Err(e @ RunError::NotFound { .. }) => {
            PVS_MISSING.call_once(|| tracing::warn!("{e}; LVM is seen only through LVM2_member signatures"));
            None
        }
        Err(e) => failed(e.to_string()),
    }
}
