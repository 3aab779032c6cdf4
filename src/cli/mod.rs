//! The `osdkeeper` command line: argument definitions and dispatch. One
//! file per noun (`host`, `device`, `apply`, `spec`, `osd`, `swap`, `bench`,
//! `events`, `status`, `token`, ...); the commands that talk to a daemon
//! share `remote` (`--url`, `--cacert`, `--format`, exit statuses) and
//! reach it only through `crate::client`; everything they print goes
//! through `out`. `serve`, `agent` and `demo` start the daemon, the agent
//! and the demo; `preview` is the offline dry-run; `certs` and
//! `agent_token` make credentials.

mod agent;
mod agent_token;
mod apply;
mod backup;
mod bench;
mod certs;
mod demo;
mod device;
mod events;
mod host;
mod osd;
pub mod out;
mod preview;
mod remote;
mod serve;
mod spec;
mod status;
mod swap;
mod token;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// `--format`, as `ceph` offers it: `plain` (the tables; `table` is an
/// older name for it), `json` (one line), `json-pretty`, `yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[value(alias = "table")]
    Plain,
    Json,
    JsonPretty,
    Yaml,
}

#[derive(Parser, Debug)]
#[command(
    name = "osdkeeper",
    version,
    about = "Manages the lifecycle of Ceph OSDs: drive specs, inventories, safe removal"
)]
pub struct Cli {
    /// `--url`, `--cacert`, `--format`: before or after the subcommand.
    #[command(flatten)]
    pub global: remote::Remote,
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
    },
    /// Devices of every host, as their agents report them.
    Device {
        #[command(subcommand)]
        cmd: device::DeviceCmd,
    },
    /// Apply OSD specs (or preview them with --dry-run) on the daemon.
    Apply {
        #[command(flatten)]
        args: apply::ApplyArgs,
    },
    /// OSDs: list them, remove them (drain, stop, purge or destroy, zap), follow removals.
    Osd {
        #[command(subcommand)]
        cmd: osd::OsdCmd,
    },
    /// Swaps (`osd replace`): their state, progress and actions; stop one.
    Swap {
        #[command(subcommand)]
        cmd: swap::SwapCmd,
    },
    /// Benchmarks: each OSD's disk (`bench osds`), with the outliers among comparable OSDs.
    Bench {
        #[command(subcommand)]
        cmd: bench::BenchCmd,
    },
    /// Applied specs.
    Spec {
        #[command(subcommand)]
        cmd: spec::SpecCmd,
    },
    /// Named API tokens with roles (read, operate, admin).
    Token {
        #[command(subcommand)]
        cmd: token::TokenCmd,
    },
    /// Whether the daemon runs and Ceph answers it, the releases the cluster
    /// runs (an upgrade under way), and the daemon's warnings (`/healthz`).
    Status,
    /// The daemon's event log.
    Events {
        #[command(flatten)]
        args: events::EventsArgs,
    },
    /// Dry-run OSD specs against an inventory file, offline (no daemon needed).
    Preview(preview::PreviewArgs),
    /// Run the host agent on a storage host: reports its disks, runs ceph-volume for the daemon.
    Agent(agent::AgentArgs),
    /// Make a small CA and TLS certificates for the daemon and its hosts (for operators without a PKI),
    /// the agent key and each host's agent token.
    Certs(certs::CertsArgs),
    /// Print one host's agent token, derived from the daemon's agent key (run on the daemon's machine).
    AgentToken(agent_token::AgentTokenArgs),
    /// Copy the daemon's database to FILE while it runs (SQLite's VACUUM INTO), and check the copy.
    Backup(backup::DbArgs),
    /// Put a backup in place of the database (the daemon stopped; the old one is kept aside).
    Restore(backup::DbArgs),
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
    let remote = cli.global;
    match cli.command {
        Command::Preview(args) => preview::run(args, remote.format),
        Command::Serve(args) => serve::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Host { cmd } => remote::run(|| async move { host::run(&remote, cmd).await }),
        Command::Device { cmd } => remote::run(|| async move { device::run(&remote, cmd).await }),
        Command::Apply { args } => remote::run(|| async move { apply::run(&remote, args).await }),
        Command::Osd { cmd } => remote::run(|| async move { osd::run(&remote, cmd).await }),
        Command::Swap { cmd } => remote::run(|| async move { swap::run(&remote, cmd).await }),
        Command::Bench { cmd } => remote::run(|| async move { bench::run(&remote, cmd).await }),
        Command::Spec { cmd } => remote::run(|| async move { spec::run(&remote, cmd).await }),
        Command::Token { cmd } => remote::run(|| async move { token::run(&remote, cmd).await }),
        Command::Status => remote::run(|| async move { status::run(&remote).await }),
        Command::Events { args } => remote::run(|| async move { events::run(&remote, args).await }),
        Command::Agent(args) => agent::run(args),
        Command::Certs(args) => certs::run(args),
        Command::AgentToken(args) => agent_token::run(args),
        Command::Backup(args) => backup::run_backup(args, &remote),
        Command::Restore(args) => backup::run_restore(args),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_options_go_before_or_after_the_subcommand() {
        for argv in [
            &["osdkeeper", "--url", "h:1", "--format", "yaml", "host", "ls"][..],
            &["osdkeeper", "host", "--url", "h:1", "ls", "--format", "yaml"],
            &["osdkeeper", "host", "ls", "--url=h:1", "--format=yaml"],
        ] {
            let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            assert_eq!((cli.global.url.as_str(), cli.global.format), ("h:1", Format::Yaml), "{argv:?}");
        }
        let cli = Cli::try_parse_from(["osdkeeper", "osd", "ls", "--format", "table"]).unwrap();
        assert_eq!(cli.global.format, Format::Plain, "the older name still works");
    }
}
