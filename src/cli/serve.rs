//! `osdkeeper serve`: the daemon.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use super::exit;
use crate::config::{Config, FileConfig, LogFormat, Overrides};

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8740, or the config file's].
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// SQLite database file, or ceph:POOL/NAMESPACE/NAME for one kept in
    /// RADOS that several daemons share, one leading [default: osdkeeper.db, or the config file's].
    #[arg(long)]
    db: Option<PathBuf>,
    /// Create the RADOS pool of a ceph: database if it does not exist.
    #[arg(long)]
    create_pool: bool,
    /// YAML config file (see deploy/osdkeeper.example.yaml).
    #[arg(long, env = "OSDKEEPER_CONFIG")]
    config: Option<PathBuf>,
    #[arg(long, value_enum)]
    log_format: Option<LogFormat>,
    /// The Ceph cluster's config file (the admin keyring is found through it).
    #[arg(long, env = "CEPH_CONF")]
    ceph_conf: Option<PathBuf>,
    /// Serve HTTPS with this certificate (PEM, with its chain); required off loopback.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// File holding the bootstrap admin token (wins over token_file; OSDKEEPER_TOKEN wins over both).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// File holding the agent key, from which each host's agent token is derived (wins over agents.key_file).
    #[arg(long, value_name = "FILE")]
    agent_key_file: Option<PathBuf>,
    /// File holding the key before it, while agents still hold its tokens (wins over agents.previous_key_file).
    #[arg(long, value_name = "FILE", env = "OSDKEEPER_AGENT_PREVIOUS_KEY_FILE")]
    agent_previous_key_file: Option<PathBuf>,
    /// File holding the one token all agents took before each had its own, for agents not moved yet
    /// (wins over agent_token_file).
    #[arg(long, value_name = "FILE", env = "OSDKEEPER_AGENT_TOKEN_FILE")]
    agent_token_file: Option<PathBuf>,
    /// The CA that signed the agents' certificates (agents at https:// addresses).
    #[arg(long, value_name = "FILE")]
    agent_ca: Option<PathBuf>,
}

pub fn run(args: ServeArgs) -> ExitCode {
    let file = match &args.config {
        Some(p) => match FileConfig::read(p) {
            Ok(f) => f,
            Err(e) => return fail(e.to_string()),
        },
        None => FileConfig::default(),
    };
    let overrides = Overrides {
        listen: args.listen,
        db: args.db,
        create_pool: args.create_pool,
        token: std::env::var("OSDKEEPER_TOKEN").ok(),
        agent_token: std::env::var("OSDKEEPER_AGENT_TOKEN").ok(),
        token_file: args.token_file,
        agent_token_file: args.agent_token_file,
        agent_key_file: args.agent_key_file,
        agent_previous_key_file: args.agent_previous_key_file,
        log_format: args.log_format,
        ceph_conf: args.ceph_conf,
        tls_cert: args.tls_cert,
        tls_key: args.tls_key,
        agent_ca: args.agent_ca,
    };
    let config = match Config::resolve(file, overrides) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    crate::telemetry::init(config.log_format);
    if config.db.file().is_none() {
        let (name, keyring) = (config.ceph_name.as_deref(), config.ceph_keyring.as_deref());
        if let Err(e) = vfs_environment(config.ceph_conf.as_deref(), name, keyring) {
            return fail(e);
        }
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    match rt.block_on(crate::app::serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e.to_string()),
    }
}

/// Ceph's SQLite VFS finds its cluster as every Ceph client does, through
/// `CEPH_CONF` and `CEPH_ARGS`: given the daemon's own settings here,
/// before any thread starts (the environment is not safe to change later).
/// `CEPH_ARGS` is split at whitespace, without quoting: a name or keyring
/// path with a space in it is refused rather than misread.
pub(super) fn vfs_environment(
    conf: Option<&std::path::Path>,
    name: Option<&str>,
    keyring: Option<&std::path::Path>,
) -> Result<(), String> {
    if let Some(conf) = conf {
        std::env::set_var("CEPH_CONF", conf);
    }
    let mut args = std::env::var("CEPH_ARGS").unwrap_or_default();
    let keyring = keyring.map(|k| k.display().to_string());
    for (flag, value) in [("--name", name.map(str::to_string)), ("--keyring", keyring)] {
        let Some(value) = value else { continue };
        if value.chars().any(char::is_whitespace) {
            return Err(format!(
                "ceph.{}: {value:?} holds whitespace, which Ceph's SQLite VFS cannot be given (CEPH_ARGS)",
                flag.trim_start_matches('-')
            ));
        }
        args.push_str(&format!(" {flag} {value}"));
    }
    if !args.trim().is_empty() {
        std::env::set_var("CEPH_ARGS", args.trim());
    }
    Ok(())
}

fn fail(message: String) -> ExitCode {
    eprintln!("osdkeeper serve: {message}");
    ExitCode::from(exit::UNREADABLE)
}
