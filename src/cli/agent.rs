//! `osdkeeper agent`: runs the host agent (see `agent_server`).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct AgentArgs {}

pub fn run(_args: AgentArgs) -> ExitCode {
    eprintln!("osdkeeper agent: not written yet");
    ExitCode::from(2)
}
