//! The `osdkeeper` command line: argument definitions and dispatch.

mod agent;
mod apply;
mod certs;
mod demo;
mod device;
mod events;
mod host;
mod osd;
mod preview;
mod remote;
mod serve;
mod spec;
mod token;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Parser, Debug)]
#[command(
    name = "osdkeeper",
    version,
    about = "Manages the lifecycle of Ceph OSDs: drive specs, inventories, safe removal"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the daemon (API, inventory poller, reconciler).
    Serve(serve::ServeArgs),
    /// Run the daemon on a simulated cluster and serve the dashboard (no Ceph needed).
    Demo(demo::DemoArgs),
    /// Hosts and their agents.
    Host {
        #[command(subcommand)]
        cmd: host::HostCmd,
        #[command(flatten)]
        remote: remote::Remote,
    },
    /// Devices of every host, as their agents report them.
    Device {
        #[command(subcommand)]
        cmd: device::DeviceCmd,
        #[command(flatten)]
        remote: remote::Remote,
    },
    /// Apply OSD specs (or preview them with --dry-run) on the daemon.
    Apply {
        #[command(flatten)]
        args: apply::ApplyArgs,
        #[command(flatten)]
        remote: remote::Remote,
    },
    /// OSDs: list them, remove them (drain, stop, purge or destroy, zap), follow removals.
    Osd {
        #[command(subcommand)]
        cmd: osd::OsdCmd,
        #[command(flatten)]
        remote: remote::Remote,
    },
    /// Applied specs.
    Spec {
        #[command(subcommand)]
        cmd: spec::SpecCmd,
        #[command(flatten)]
        remote: remote::Remote,
    },
    /// Named API tokens with roles (read, operate, admin).
    Token {
        #[command(subcommand)]
        cmd: token::TokenCmd,
        #[command(flatten)]
        remote: remote::Remote,
    },
    /// The daemon's event log.
    Events {
        #[command(flatten)]
        args: events::EventsArgs,
        #[command(flatten)]
        remote: remote::Remote,
    },
    /// Dry-run OSD specs against an inventory file, offline (no daemon needed).
    Preview(preview::PreviewArgs),
    /// Run the host agent on a storage host: reports its disks, runs ceph-volume for the daemon.
    Agent(agent::AgentArgs),
    /// Make a small CA and TLS certificates for the daemon and its hosts (for operators without a PKI).
    Certs(certs::CertsArgs),
}

/// Exit statuses shared by every command.
pub mod exit {
    /// The input was read, but something in it is invalid (output still printed).
    pub const INVALID: u8 = 1;
    /// An input could not be read or parsed at all.
    pub const UNREADABLE: u8 = 2;
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Preview(args) => preview::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Host { cmd, remote } => remote::run(|| async move { host::run(&remote, cmd).await }),
        Command::Device { cmd, remote } => remote::run(|| async move { device::run(&remote, cmd).await }),
        Command::Apply { args, remote } => remote::run(|| async move { apply::run(&remote, args).await }),
        Command::Osd { cmd, remote } => remote::run(|| async move { osd::run(&remote, cmd).await }),
        Command::Spec { cmd, remote } => remote::run(|| async move { spec::run(&remote, cmd).await }),
        Command::Token { cmd, remote } => remote::run(|| async move { token::run(&remote, cmd).await }),
        Command::Events { args, remote } => remote::run(|| async move { events::run(&remote, args).await }),
        Command::Agent(args) => agent::run(args),
        Command::Certs(args) => certs::run(args),
    }
}
