//! The `osdkeeper` command line: argument definitions and dispatch.

mod agent;
mod preview;

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
    /// Dry-run OSD specs against an inventory file, offline (no daemon needed).
    Preview(preview::PreviewArgs),
    /// Run the host agent on a storage host: reports its disks, runs ceph-volume for the daemon.
    Agent(agent::AgentArgs),
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
        Command::Agent(args) => agent::run(args),
    }
}
