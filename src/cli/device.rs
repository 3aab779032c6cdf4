//! `osdkeeper device ls|release|zap|held`.

use std::process::ExitCode;

use super::out;
use super::remote::Remote;
use crate::client::ClientError;
use crate::render::devices::{device_table, held_table};
use crate::wire::api::devices::{DeviceQuery, DeviceRef, ZapBody};

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
}

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
    }
    Ok(ExitCode::SUCCESS)
}
