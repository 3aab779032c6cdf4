//! `osdkeeper spec ls|show|rm`.

use std::process::ExitCode;

use super::remote::{print_json, Remote};
use super::Format;
use crate::client::ClientError;
use crate::render::specs::{spec_source, spec_table};

#[derive(clap::Subcommand, Debug)]
pub enum SpecCmd {
    /// List applied specs.
    Ls {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Show a spec as applied, with its history.
    Show { service_name: String },
    /// Remove a spec (its OSDs stay; no new ones are created).
    Rm { service_name: String },
}

pub async fn run(r: &Remote, cmd: SpecCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        SpecCmd::Ls { format } => {
            let specs = c.specs().await?;
            match format {
                Format::Json => print_json(&specs),
                Format::Table => print!("{}", spec_table(&specs)),
            }
        }
        SpecCmd::Show { service_name } => print!("{}", spec_source(&c.spec(&service_name).await?)),
        SpecCmd::Rm { service_name } => {
            c.remove_spec(&service_name).await?;
            println!("Removed spec {service_name}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
