//! `osdkeeper osd ls`, `osd rm ID... [--replace] [--force] [--zap]
//! [--dry-run] [--ignore-preview-blockers]`,
//! `osd rm status [ID...] [--finished]`, `osd rm stop ID...`; `osd replace`
//! is in `swap.rs`.

use std::process::ExitCode;

use super::out;
use super::remote::{parse_ids, Remote};
use crate::client::ClientError;
use crate::render::deployments::deployment_table;
use crate::render::osds::{osd_table, removal_table};
use crate::render::removal_preview::preview_text;
use crate::wire::api::deployments::DeploymentQuery;
use crate::wire::api::osds::{OsdQuery, RemoveBody, StatusQuery};

#[derive(clap::Subcommand, Debug)]
pub enum OsdCmd {
    /// List every OSD with its host, devices, CRUSH weight, up/in and PGs.
    Ls {
        /// Also each OSD's latest bench (`bench osds`) and whether it is an outlier.
        #[arg(long)]
        wide: bool,
    },
    /// `osd rm ID... [--replace] [--force] [--zap] [--fast] [--dry-run] [--ignore-preview-blockers]`,
    /// `osd rm status [ID...]`, `osd rm stop ID...`
    Rm {
        /// OSD ids (N or osd.N), or `status` (optionally with ids), or `stop` followed by ids.
        #[arg(required = true, num_args = 1..)]
        args: Vec<String>,
        /// Destroy instead of purge, keeping the id for the replacement disk.
        #[arg(long)]
        replace: bool,
        /// Do not wait for the PGs to drain (safe-to-destroy is still required).
        #[arg(long)]
        force: bool,
        /// Wipe the OSD's devices once it is gone.
        #[arg(long)]
        zap: bool,
        /// Recover faster while it drains (mClock: osd_mclock_profile high_recovery_ops; wpq:
        /// osd_max_backfills and osd_recovery_max_active raised); the values are put back when
        /// the last fast drain ends or is stopped, also after a crash.
        #[arg(long)]
        fast: bool,
        /// Show what the removal would do (PGs and bytes to move, where, fullness, blockers, ETA)
        /// and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Remove even when the preview finds blockers (PGs left without a place, an OSD pushed
        /// past backfillfull) or cannot be computed; the removal records what it ignored.
        #[arg(long)]
        ignore_preview_blockers: bool,
        /// With `status`: also the finished removals, with a FINISHED column...
        #[arg(long)]
        finished: bool,
        /// ...at most this many of them, the latest [default: 20; giving it implies --finished].
        #[arg(long)]
        history: Option<i64>,
    },
    /// Swap disks moving the data once: `osd replace ID... --with HOST:DEV[,DEV...]` hands the
    /// old OSDs' data to the new disks (free bay); `--in-place` rebuilds it on a disk put in the
    /// old one's slot. `--dry-run` shows what each way costs.
    Replace(super::swap::ReplaceArgs),
    /// `osd deploy status`: OSDs being made from applied specs, disk by disk.
    Deploy {
        #[command(subcommand)]
        cmd: DeployCmd,
    },
}

#[derive(clap::Subcommand, Debug)]
pub enum DeployCmd {
    /// Each deployment: its state, OSDs, and what it waits on or why it failed.
    Status {
        /// How many finished deployments to show.
        #[arg(long, default_value_t = 20)]
        history: i64,
    },
}

pub async fn run(r: &Remote, cmd: OsdCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        OsdCmd::Replace(args) => return super::swap::replace(r, args).await,
        OsdCmd::Ls { wide } => out::answer(r.format, &c.osds(&OsdQuery::default()).await?, |o| osd_table(o, wide)),
        OsdCmd::Deploy { cmd: DeployCmd::Status { history } } => {
            let rows = c.deployments(&DeploymentQuery { history: Some(history) }).await?;
            out::answer(r.format, &rows, |rows| deployment_table(rows));
        }
        OsdCmd::Rm { args, replace, force, zap, fast, dry_run, ignore_preview_blockers, finished, history } => {
            match args[0].as_str() {
                "status" => {
                    // Live removals only unless asked: scripts that parse
                    // cephadm's output expect its empty message when nothing runs.
                    let finished = finished || history.is_some();
                    let history = if finished { history.unwrap_or(20).max(0) } else { 0 };
                    let mut rows = c.removals(&StatusQuery { history: Some(history) }).await?;
                    let ids = parse_ids(&args[1..])?;
                    if !ids.is_empty() {
                        rows.retain(|row| ids.contains(&row.osd_id));
                    }
                    out::answer(r.format, &rows, |rows| removal_table(rows, finished));
                }
                "stop" if args.len() == 1 => {
                    return Err(ClientError::Usage(
                        "osd rm stop needs the OSD ids whose removal to stop, e.g. `osd rm stop 8 15`".into(),
                    ))
                }
                "stop" => {
                    let rows = c.stop_removals(&parse_ids(&args[1..])?).await?;
                    if !out::structured(r.format, &rows) {
                        out::line("Stopped OSD(s) removal; the original weight will be restored");
                    }
                }
                _ if dry_run => {
                    let preview = c.preview_removals(&parse_ids(&args)?, zap).await?;
                    out::answer(r.format, &preview, preview_text);
                }
                _ => {
                    let ids = parse_ids(&args)?;
                    let body = RemoveBody { ids, replace, force, zap, fast, ignore_preview_blockers };
                    let rows = c.schedule_removals(&body).await?;
                    if !out::structured(r.format, &rows) {
                        out::line("Scheduled OSD(s) for removal; follow with `osdkeeper osd rm status`");
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
