//! `osdkeeper host add|ls|rm|label`.

use std::process::ExitCode;

use super::remote::{print_json, Remote};
use super::Format;
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
    },
    /// List hosts with their agent, labels and status.
    Ls {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
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
        HostCmd::Add { name, addr, labels } => {
            let h = c.add_host(&AddHost { name, addr, labels }).await?;
            println!("Added host '{}' with agent {}", h.name, h.addr);
        }
        HostCmd::Ls { format } => {
            let hosts = c.hosts(&HostQuery::default()).await?;
            match format {
                Format::Json => print_json(&hosts),
                Format::Table => print!("{}", host_table(&hosts)),
            }
        }
        HostCmd::Rm { name } => {
            c.remove_host(&name).await?;
            println!("Removed host '{name}'");
        }
        HostCmd::Label { cmd: LabelCmd::Add { name, label } } => {
            c.add_label(&name, &label).await?;
            println!("Added label {label} to host {name}");
        }
        HostCmd::Label { cmd: LabelCmd::Rm { name, label } } => {
            c.remove_label(&name, &label).await?;
            println!("Removed label {label} from host {name}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
