//! What every command that talks to a running daemon shares: where the
//! daemon is (`--url`, `OSDKEEPER_URL`), its CA and token, the output
//! format (all global options of `Cli`), a small runtime, and exit codes
//! and `ceph`'s error words from errors.

use std::process::ExitCode;

use super::{exit, Format};
use crate::client::{Client, ClientError};

#[derive(clap::Args, Debug, Clone)]
pub struct Remote {
    /// The daemon's address.
    #[arg(long, global = true, env = "OSDKEEPER_URL", default_value = "http://127.0.0.1:8740")]
    pub url: String,
    /// API token (from the environment only, so it stays out of `ps`).
    #[arg(skip = std::env::var("OSDKEEPER_TOKEN").ok())]
    pub token: Option<String>,
    /// The CA certificates (PEM) that an `https://` daemon's certificate must chain to.
    #[arg(long, global = true, env = "OSDKEEPER_CACERT", value_name = "FILE")]
    pub cacert: Option<std::path::PathBuf>,
    /// Output format, as `ceph` offers it.
    #[arg(long, global = true, value_enum, default_value_t = Format::Plain)]
    pub format: Format,
}

impl Remote {
    pub fn client(&self) -> Result<Client, ClientError> {
        Client::new(&crate::client::daemon_url(&self.url)?, self.token.clone(), self.cacert.as_deref())
    }
}

/// Runs a remote command on a small runtime and maps errors to exit codes
/// (`docs/cli.md`: 1 refused, 2 unreachable or unreadable).
pub fn run<F, Fut>(f: F) -> ExitCode
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<ExitCode, ClientError>>,
{
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("osdkeeper: cannot start: {e}");
            return ExitCode::from(exit::UNREADABLE);
        }
    };
    match rt.block_on(f()) {
        Ok(code) => code,
        Err(e) => {
            // `ceph`'s shape: `Error ENOENT: unknown host f5-422-09`.
            match &e {
                // The message joins every document's error on one line; a
                // terminal reads them better one per line.
                ClientError::Api { body, .. } if !body.errors.is_empty() => {
                    eprintln!("Error {}: {} invalid document(s); nothing was applied:", e.errno(), body.errors.len());
                    for err in &body.errors {
                        eprintln!("  {}", err.error);
                    }
                }
                _ => eprintln!("Error {}: {e}", e.errno()),
            }
            ExitCode::from(if e.is_client_error() { exit::INVALID } else { exit::UNREADABLE })
        }
    }
}

/// `8` or `osd.8`.
pub fn parse_ids(args: &[String]) -> Result<Vec<u32>, ClientError> {
    args.iter()
        .map(|a| {
            a.trim_start_matches("osd.")
                .parse::<u32>()
                .map_err(|_| ClientError::Usage(format!("{a:?} is not an OSD id (write 8 or osd.8)")))
        })
        .collect()
}
