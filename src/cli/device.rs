//! `osdkeeper device ls|release|zap|held|replace|probe|probes`.

use std::process::ExitCode;

use super::out;
use super::remote::Remote;
use crate::client::ClientError;
use crate::render::devices::{device_table, held_table};
use crate::render::probes::{probe_text, probes_table};
use crate::render::removal_preview::preview_text;
use crate::render::swaps::replace_ways_text;
use crate::wire::api::devices::{DeviceQuery, DeviceRef, ReplaceBody, ZapBody};
use crate::wire::api::probes::{ProbeBody, ProbeMode, ProbeQuery, ProbeState};

#[derive(clap::Subcommand, Debug)]
pub enum DeviceCmd {
    /// List devices like `ceph orch device ls`.
    Ls {
        /// Only these hosts (cephadm's `device ls HOST...`).
        hosts: Vec<String>,
        /// Ask the agents for a fresh inventory first.
        #[arg(long)]
        refresh: bool,
        #[arg(long)]
        wide: bool,
    },
    /// Let specs use a device osdkeeper holds back (after a zap or an OSD removal).
    Release { host: String, path: String },
    /// Wipe a device's labels and signatures (refused for a device in use).
    Zap {
        host: String,
        path: String,
        /// Required: this PERMANENTLY ERASES the device.
        #[arg(long)]
        force: bool,
    },
    /// List held devices.
    Held,
    /// A failed or failing disk: every OSD with a volume on it (its data, or
    /// its DB/WAL on a shared SSD) drained (or, `--in-place`, stopped under
    /// noout) and destroyed keeping its id, only their volumes zapped, the
    /// slot held until a new disk is in it; the specs then redeploy the ids
    /// on the new disk.
    Replace {
        host: String,
        path: String,
        /// Say what it would do; change nothing.
        #[arg(long, conflicts_with_all = ["yes_i_really_mean_it", "clear"])]
        dry_run: bool,
        /// Required: the OSDs on the disk are destroyed and their volumes zapped.
        #[arg(long)]
        yes_i_really_mean_it: bool,
        /// Undo: stop the removals that can still stop, lift the slot's holds.
        #[arg(long, conflicts_with_all = ["fast", "ignore_preview_blockers"])]
        clear: bool,
        /// Drain with recovery raised (as `osd rm --fast`).
        #[arg(long)]
        fast: bool,
        /// Queue the removals even where their preview finds blockers.
        #[arg(long, conflicts_with = "in_place")]
        ignore_preview_blockers: bool,
        /// No drain: noout, stop, destroy; the new disk's OSDs rebuild the
        /// copies once (PGs a copy short until then; --dry-run shows both ways).
        #[arg(long, conflicts_with_all = ["fast", "clear"])]
        in_place: bool,
        /// In place: accept PGs left with one copy.
        #[arg(long, requires = "in_place")]
        accept_single_copy: bool,
        /// In place: accept PGs below their pool's min_size (client I/O to them stops).
        #[arg(long, requires = "in_place")]
        accept_inactive: bool,
    },
    /// Run fio on a blank disk before it becomes an OSD: sequential writes and reads, 4k random reads, 4k sync writes.
    Probe {
        host: String,
        path: String,
        /// A few seconds per job over the first 256 MiB [the default].
        #[arg(long, conflicts_with = "full")]
        quick: bool,
        /// A minute per job over up to 16 GiB.
        #[arg(long)]
        full: bool,
        /// Required: the probe OVERWRITES the start of the device (it runs on blank devices only).
        #[arg(long)]
        yes_i_really_mean_it: bool,
        /// Queue the probe and return without waiting for it.
        #[arg(long)]
        no_wait: bool,
    },
    /// Each disk's latest probe (with the outliers), the last N, or one probe job by job.
    Probes {
        /// One probe, job by job.
        id: Option<i64>,
        /// Only this host's.
        #[arg(long, conflicts_with = "id")]
        host: Option<String>,
        /// The last N probes, newest first.
        #[arg(long, conflicts_with = "id")]
        history: Option<i64>,
    },
}

/// How often the CLI looks whether its probe is done.
const POLL: std::time::Duration = std::time::Duration::from_millis(500);

pub async fn run(r: &Remote, cmd: DeviceCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        DeviceCmd::Ls { mut hosts, refresh, wide } => {
            let mut rows = Vec::new();
            if hosts.is_empty() {
                rows = c.devices(&DeviceQuery { refresh, ..DeviceQuery::default() }).await?;
            }
            // One request per named host: an unknown name is an error
            // (exit 1) rather than a silently shorter table. Sorted by
            // host, as cephadm sorts its rows.
            hosts.sort();
            hosts.dedup();
            for host in hosts {
                rows.extend(c.devices(&DeviceQuery { host: Some(host), refresh, ..DeviceQuery::default() }).await?);
            }
            out::answer(r.format, &rows, |rows| device_table(rows, wide));
        }
        DeviceCmd::Release { host, path } => {
            c.release(&DeviceRef { host: host.clone(), path: path.clone() }).await?;
            out::line(format!("Released {path} on {host}: specs may use it again"));
        }
        DeviceCmd::Zap { host, path, force } => {
            c.zap(&ZapBody { host: host.clone(), path: path.clone(), force }).await?;
            out::line(format!(
                "zap successful for {path} on {host} (held: `osdkeeper device release {host} {path}` lets specs use it)"
            ));
        }
        DeviceCmd::Held => out::answer(r.format, &c.held().await?, |h| held_table(h)),
        DeviceCmd::Replace { host, path, clear: true, .. } => {
            let cleared = c.clear_replacement(&DeviceRef { host, path }).await?;
            out::answer(r.format, &cleared, |c| {
                let mut lines = vec![format!("Cleared the replacement of {} on {}", c.path, c.host)];
                if !c.released.is_empty() {
                    lines.push(format!("released: {}", c.released.join(", ")));
                }
                if !c.stopped.is_empty() {
                    let osds: Vec<String> = c.stopped.iter().map(|i| format!("osd.{i}")).collect();
                    lines.push(format!("stopped the removal of: {}", osds.join(", ")));
                }
                if !c.not_stopped.is_empty() {
                    lines.push(format!(
                        "past the point of no return: {} (the specs redeploy them on the disk in the slot)",
                        c.not_stopped.join(", ")
                    ));
                }
                lines.join("\n")
            });
        }
        DeviceCmd::Replace {
            host,
            path,
            dry_run,
            yes_i_really_mean_it,
            clear: false,
            fast,
            ignore_preview_blockers,
            in_place,
            accept_single_copy,
            accept_inactive,
        } => {
            let body = ReplaceBody {
                host,
                path,
                dry_run,
                yes_i_really_mean_it,
                fast,
                ignore_preview_blockers,
                in_place,
                accept_single_copy,
                accept_inactive,
            };
            let answer = c.replace_device(&body).await?;
            out::answer(r.format, &answer, |a| {
                let mut lines = a.text.clone();
                if let Some(p) = &a.preview {
                    if let Some(w) = &a.ways {
                        lines.push(String::new());
                        lines.push(replace_ways_text(w));
                    }
                    lines.push(String::new());
                    lines.push(preview_text(p));
                } else {
                    lines.push(format!(
                        "Follow with `osdkeeper osd rm status`; `osdkeeper device replace {} {} --clear` undoes it",
                        a.host, a.path
                    ));
                }
                lines.join("\n")
            });
        }
        DeviceCmd::Probe { host, path, quick: _, full, yes_i_really_mean_it, no_wait } => {
            let mode = Some(if full { ProbeMode::Full } else { ProbeMode::Quick });
            let mut p = c.probe(&ProbeBody { host, path, mode, yes_i_really_mean_it }).await?;
            if no_wait {
                if !out::structured(r.format, &p) {
                    out::line(format!(
                        "Queued probe {} of {} on {}; follow with `osdkeeper device probes {}`",
                        p.probe_id, p.path, p.host, p.probe_id
                    ));
                }
                return Ok(ExitCode::SUCCESS);
            }
            while !p.state.is_finished() {
                tokio::time::sleep(POLL).await;
                p = c.disk_probe(p.probe_id).await?;
            }
            out::answer(r.format, &p, probe_text);
            if p.state == ProbeState::Failed {
                // Scripts read why on stderr, as for every other failure;
                // the record above says it to people.
                let why = p.error.as_deref().unwrap_or("no reason recorded");
                eprintln!("osdkeeper: probe {} of {} on {} failed: {why}", p.probe_id, p.path, p.host);
                return Ok(ExitCode::from(super::exit::INVALID));
            }
        }
        DeviceCmd::Probes { id: Some(id), .. } => out::answer(r.format, &c.disk_probe(id).await?, probe_text),
        DeviceCmd::Probes { id: None, host, history } => {
            let rows = c.probes(&ProbeQuery { history, host }).await?;
            out::answer(r.format, &rows, |rows| probes_table(rows));
        }
    }
    Ok(ExitCode::SUCCESS)
}
