//! `osdkeeper agent-token HOST [--key-file FILE]`: the agent token of one
//! host, derived from the daemon's agent key (`wire::agent_token`), for
//! that host's `/etc/osdkeeper/agent-token`. Run on the daemon's machine,
//! which alone holds the key; the token opens that host's agent only.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::exit;
use crate::wire::agent_token::AgentKey;

/// Where deploy/install.sh puts the key.
pub const DEFAULT_KEY_FILE: &str = "/etc/osdkeeper/agent-key";

#[derive(clap::Args, Debug)]
pub struct AgentTokenArgs {
    /// The host, named as the daemon knows it (`host add NAME`).
    host: String,
    /// The daemon's agent key.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_KEY_FILE)]
    key_file: PathBuf,
}

/// Reads an agent key file.
pub fn read_key(path: &Path) -> Result<AgentKey, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    AgentKey::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A new key from the operating system's generator.
pub fn new_key() -> Result<AgentKey, String> {
    let mut random = [0u8; 32];
    getrandom::getrandom(&mut random).map_err(|e| format!("no random bytes from the system: {e}"))?;
    Ok(AgentKey::from_random(&random))
}

pub fn run(args: AgentTokenArgs) -> ExitCode {
    if args.host.trim().is_empty() || args.host.trim() != args.host {
        eprintln!("osdkeeper agent-token: {:?} is no host name", args.host);
        return ExitCode::from(exit::INVALID);
    }
    match read_key(&args.key_file) {
        Ok(key) => {
            super::out::line(key.token_for(&args.host));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("osdkeeper agent-token: {e}");
            ExitCode::from(exit::UNREADABLE)
        }
    }
}
