//! `osdkeeper host add|ls|rm|label`.

use std::process::ExitCode;

use super::out;
use super::remote::Remote;
use crate::client::ClientError;
use crate::render::hosts::host_table;
use crate::wire::api::hosts::{AddHost, HostQuery};

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
    /// Forget a host (its OSDs are not touched).
    Rm { name: String },
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
        HostCmd::Rm { name } => {
            c.remove_host(&name).await?;
            out::line(format!("Removed host '{name}'"));
        }
        HostCmd::Label { cmd: LabelCmd::Add { name, label } } => {
            c.add_label(&name, &label).await?;
            out::line(format!("Added label {label} to host {name}"));
        }
        HostCmd::Label { cmd: LabelCmd::Rm { name, label } } => {
            c.remove_label(&name, &label).await?;
            out::line(format!("Removed label {label} from host {name}"));
        }
    }
    Ok(ExitCode::SUCCESS)
}
