//! `osdkeeper osd ls`, `osd rm ID... [--replace] [--force] [--zap]`,
//! `osd rm status`, `osd rm stop ID...`.

use std::process::ExitCode;

use super::remote::{parse_ids, print_json, Remote};
use super::Format;
use crate::client::ClientError;
use crate::render::deployments::deployment_table;
use crate::render::osds::{osd_table, removal_table};
use crate::wire::api::deployments::DeploymentQuery;
use crate::wire::api::osds::{OsdQuery, RemoveBody, StatusQuery};

#[derive(clap::Subcommand, Debug)]
pub enum OsdCmd {
    /// List every OSD with its host, devices, CRUSH weight, up/in and PGs.
    Ls {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// `osd rm ID... [--replace] [--force] [--zap]`, `osd rm status`, `osd rm stop ID...`
    Rm {
        /// OSD ids (N or osd.N), or `status`, or `stop` followed by ids.
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
        /// With `status`: how many finished removals to show.
        #[arg(long, default_value_t = 20)]
        history: i64,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
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
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

pub async fn run(r: &Remote, cmd: OsdCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        OsdCmd::Ls { format } => {
            let osds = c.osds(&OsdQuery::default()).await?;
            match format {
                Format::Json => print_json(&osds),
                Format::Table => print!("{}", osd_table(&osds)),
            }
        }
        OsdCmd::Deploy { cmd: DeployCmd::Status { history, format } } => {
            let rows = c.deployments(&DeploymentQuery { history: Some(history) }).await?;
            match format {
                Format::Json => print_json(&rows),
                Format::Table => print!("{}", deployment_table(&rows)),
            }
        }
        OsdCmd::Rm { args, replace, force, zap, history, format } => match args[0].as_str() {
            "status" => {
                let rows = c.removals(&StatusQuery { history: Some(history) }).await?;
                match format {
                    Format::Json => print_json(&rows),
                    Format::Table => print!("{}", removal_table(&rows)),
                }
            }
            "stop" => {
                c.stop_removals(&parse_ids(&args[1..])?).await?;
                println!("Stopped OSD(s) removal; the original weight will be restored");
            }
            _ => {
                let rows = c.schedule_removals(&RemoveBody { ids: parse_ids(&args)?, replace, force, zap }).await?;
                match format {
                    Format::Json => print_json(&rows),
                    Format::Table => println!("Scheduled OSD(s) for removal; follow with `osdkeeper osd rm status`"),
                }
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}
