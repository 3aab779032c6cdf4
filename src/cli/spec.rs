//! `osdkeeper spec ls|show|rm`.

use std::process::ExitCode;

use super::out;
use super::remote::Remote;
use crate::client::ClientError;
use crate::render::specs::{spec_source, spec_table};

#[derive(clap::Subcommand, Debug)]
pub enum SpecCmd {
    /// List applied specs.
    Ls,
    /// Show a spec as applied, with its history (`osd.fast` or `fast`).
    Show { service_name: String },
    /// Remove a spec (its OSDs stay; no new ones are created); `osd.fast` or `fast`.
    Rm { service_name: String },
}

pub async fn run(r: &Remote, cmd: SpecCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        SpecCmd::Ls => out::answer(r.format, &c.specs().await?, |s| spec_table(s)),
        SpecCmd::Show { service_name } => {
            out::answer(r.format, &c.spec(&service_name_of(&service_name)).await?, spec_source)
        }
        SpecCmd::Rm { service_name } => {
            let removed = c.remove_spec(&service_name_of(&service_name)).await?;
            out::line(format!("Removed spec {}", removed.service_name));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every spec osdkeeper stores is an OSD spec, named `osd.<service_id>`
/// (or `osd` without one), so the `osd.` may be left out.
fn service_name_of(arg: &str) -> String {
    if arg == "osd" || arg.starts_with("osd.") {
        arg.to_string()
    } else {
        format!("osd.{arg}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_osd_prefix_may_be_left_out() {
        assert_eq!(super::service_name_of("fast"), "osd.fast");
        assert_eq!(super::service_name_of("osd.fast"), "osd.fast");
        assert_eq!(super::service_name_of("osd"), "osd");
    }
}
