//! `osdkeeper device ls|release|zap|held`.

use std::process::ExitCode;

use super::remote::{print_json, Remote};
use super::Format;
use crate::client::ClientError;
use crate::render::devices::{device_table, held_table};
use crate::wire::api::devices::{DeviceQuery, DeviceRef, ZapBody};

#[derive(clap::Subcommand, Debug)]
pub enum DeviceCmd {
    /// List devices like `ceph orch device ls`.
    Ls {
        host: Option<String>,
        /// Ask the agents for a fresh inventory first.
        #[arg(long)]
        refresh: bool,
        #[arg(long)]
        wide: bool,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
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
    Held {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

pub async fn run(r: &Remote, cmd: DeviceCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        DeviceCmd::Ls { host, refresh, wide, format } => {
            let hosts = c.devices(&DeviceQuery { host, refresh, ..DeviceQuery::default() }).await?;
            match format {
                Format::Json => print_json(&hosts),
                Format::Table => print!("{}", device_table(&hosts, wide)),
            }
        }
        DeviceCmd::Release { host, path } => {
            c.release(&DeviceRef { host: host.clone(), path: path.clone() }).await?;
            println!("Released {path} on {host}: specs may use it again");
        }
        DeviceCmd::Zap { host, path, force } => {
            c.zap(&ZapBody { host: host.clone(), path: path.clone(), force }).await?;
            println!("zap successful for {path} on {host} (held: `osdkeeper device release {host} {path}` lets specs use it)");
        }
        DeviceCmd::Held { format } => {
            let held = c.held().await?;
            match format {
                Format::Json => print_json(&held),
                Format::Table => print!("{}", held_table(&held)),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
