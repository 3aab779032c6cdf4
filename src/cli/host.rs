//! `osdkeeper host add|ls|rm|label|drain`.

use std::process::ExitCode;

use super::out;
use super::remote::Remote;
use crate::client::ClientError;
use crate::render::hosts::{host_drain_stop_text, host_drain_text, host_table};
use crate::render::removal_preview::preview_text;
use crate::wire::api::hosts::{AddHost, HostDrainBody, HostQuery, RemoveHostQuery};

#[derive(clap::Subcommand, Debug)]
pub enum HostCmd {
    /// Add a host: NAME and the HOST:PORT of its agent.
    Add {
        name: String,
        addr: String,
        /// Comma-separated labels.
        #[arg(long, value_delimiter = ',')]
        labels: Vec<String>,
        /// Add it without asking its agent first (reachable, token accepted, same host name).
        #[arg(long)]
        no_check: bool,
    },
    /// List hosts with their agent, labels and status.
    Ls,
    /// Forget a host. Refused while Ceph has OSDs on it, unless --forget-osds.
    Rm {
        name: String,
        /// Forget it although Ceph still has OSDs on it (they are left as they are).
        #[arg(long)]
        forget_osds: bool,
    },
    /// `host drain HOST`: mark it _no_schedule and remove every OSD on it;
    /// `host drain stop HOST` stops what can still be undone;
    /// `host drain status HOST` shows its removals with totals.
    Drain {
        /// HOST, or `stop HOST`, or `status HOST`.
        #[arg(required = true, num_args = 1..=2)]
        args: Vec<String>,
        /// Wipe each OSD's devices once it is purged (they are then held back from specs).
        #[arg(long)]
        zap_osd_devices: bool,
        /// Show what the drain would do (PGs, bytes, where they go, blockers) and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Drain even when the preview finds blockers; they are recorded with the removals.
        #[arg(long)]
        ignore_preview_blockers: bool,
        /// Raise recovery while the host drains; put back when the last fast drain ends or is stopped.
        #[arg(long)]
        fast: bool,
    },
    /// `host swap HOST --spec FILE --osds ID,...`: swap the OSDs for the disks the spec would
    /// take on HOST now, moving their data once (as `osd replace ID... --with HOST:DEV...`).
    Swap(super::swap::HostSwapArgs),
    /// Add or remove a label.
    Label {
        #[command(subcommand)]
        cmd: LabelCmd,
    },
}

#[derive(clap::Subcommand, Debug)]
pub enum LabelCmd {
    Add { name: String, label: String },
    Rm { name: String, label: String },
}

pub async fn run(r: &Remote, cmd: HostCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        HostCmd::Add { name, addr, labels, no_check } => {
            let h = c.add_host(&AddHost { name, addr, labels, no_check }).await?;
            out::line(format!("Added host '{}' with agent {}", h.name, h.addr));
        }
        HostCmd::Ls => out::answer(r.format, &c.hosts(&HostQuery::default()).await?, |h| host_table(h)),
        HostCmd::Rm { name, forget_osds } => {
            c.remove_host(&name, &RemoveHostQuery { forget_osds }).await?;
            out::line(format!("Removed host '{name}'"));
        }
        HostCmd::Drain { args, zap_osd_devices, dry_run, ignore_preview_blockers, fast } => {
            match (args[0].as_str(), args.get(1)) {
                ("stop", Some(host)) => {
                    let s = c.stop_host_drain(host).await?;
                    out::answer(r.format, &s, host_drain_stop_text);
                }
                ("status", Some(host)) => {
                    let s = c.host_drain_status(host).await?;
                    out::answer(r.format, &s, host_drain_text);
                }
                (host, None) if dry_run => {
                    let p = c.preview_host_drain(host, zap_osd_devices).await?;
                    out::answer(r.format, &p, preview_text);
                }
                (host, None) => {
                    let body = HostDrainBody { zap_osd_devices, ignore_preview_blockers, fast };
                    let s = c.drain_host(host, &body).await?;
                    if !out::structured(r.format, &s) {
                        out::line(format!(
                            "Scheduled to remove the following daemons from host '{host}': {}; follow with \
                             `osdkeeper host drain status {host}`",
                            s.removals.iter().map(|r| format!("osd.{}", r.osd_id)).collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
                (word, Some(_)) => {
                    return Err(ClientError::Usage(format!(
                        "host drain takes HOST, `stop HOST` or `status HOST`, not {word:?} followed by a host"
                    )))
                }
            }
        }
        HostCmd::Label { cmd: LabelCmd::Add { name, label } } => {
            c.add_label(&name, &label).await?;
            out::line(format!("Added label {label} to host {name}"));
        }
        HostCmd::Swap(args) => return super::swap::host_swap(r, args).await,
        HostCmd::Label { cmd: LabelCmd::Rm { name, label } } => {
            c.remove_label(&name, &label).await?;
            out::line(format!("Removed label {label} from host {name}"));
        }
    }
    Ok(ExitCode::SUCCESS)
}
