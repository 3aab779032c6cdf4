//! The daemon's settings: an optional YAML config file, then environment
//! variables, then command-line flags, each overriding the one before.
//! Unknown keys in the file are errors (a typo must not be ignored).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::agent_client::Fallback;
use crate::domain::yaml11;
use crate::store::location::DbLocation;
use crate::wire::agent_token::AgentKey;

mod agent_secrets;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Human,
    Json,
}

/// The config file, as written (every key optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<SocketAddr>,
    pub db: Option<PathBuf>,
    /// File holding the API token (the env var OSDKEEPER_TOKEN wins).
    pub token_file: Option<PathBuf>,
    /// File holding the one token every agent took before each host had
    /// its own: tried after a host's own is refused, while agents move
    /// (the env var OSDKEEPER_AGENT_TOKEN wins).
    pub agent_token_file: Option<PathBuf>,
    pub log_format: Option<LogFormat>,
    #[serde(default)]
    pub poll: PollFile,
    #[serde(default)]
    pub reconcile: ReconcileFile,
    #[serde(default)]
    pub ceph: CephFile,
    #[serde(default)]
    pub removal: RemovalFile,
    /// Largest request body accepted by the API, in bytes.
    pub max_body_bytes: Option<usize>,
    #[serde(default)]
    pub tls: TlsFile,
    #[serde(default)]
    pub agents: AgentsFile,
    #[serde(default)]
    pub http: HttpFile,
}

/// What a client of the API may hold (`http_server` says what each is).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpFile {
    pub header_read_timeout_s: Option<u64>,
    pub request_timeout_s: Option<u64>,
    pub max_connections: Option<usize>,
}

/// Connections the API serves at once: dashboards, CLIs, scripts and
/// Prometheus are a few dozen; the units' `LimitNOFILE` is 65536.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// The API's certificate and key (PEM); both or neither.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsFile {
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsFile {
    /// CA (PEM) that signed the agents' certificates; `https://` agents
    /// are trusted through it and nothing else.
    pub ca: Option<PathBuf>,
    /// File holding the agent key, from which each host's agent token is
    /// derived (`osdkeeper agent-token HOST`).
    pub key_file: Option<PathBuf>,
    /// The key before it, while the agents still hold its tokens (a key
    /// being rotated).
    pub previous_key_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PollFile {
    pub interval_s: Option<u64>,
    pub timeout_s: Option<u64>,
    pub concurrency: Option<usize>,
    pub max_backoff_s: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReconcileFile {
    pub enabled: Option<bool>,
    pub interval_s: Option<u64>,
    pub command_timeout_s: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CephFile {
    /// ceph.conf of the cluster (CEPH_CONF and --ceph-conf win).
    pub conf: Option<PathBuf>,
    /// The ceph CLI [default: ceph from PATH].
    pub bin: Option<String>,
    /// Ceph's osdmaptool, which the removal preview runs [default: osdmaptool from PATH].
    pub osdmaptool: Option<String>,
    /// The rados CLI, for cluster benchmarks [default: rados from PATH].
    pub rados_bin: Option<String>,
    pub timeout_s: Option<u64>,
    /// How long a benchmark pass may run past its seconds while `rados
    /// bench` waits for its writes in flight [default: its seconds + 60].
    pub bench_slack_s: Option<u64>,
    /// The cephx user the daemon acts as (`client.osdkeeper`; caps in
    /// deploy/ceph-auth.sh) [default: the ceph CLI's, client.admin].
    pub name: Option<String>,
    /// Its keyring [default: found through ceph.conf].
    pub keyring: Option<PathBuf>,
    /// Keep one connection to the cluster open for the frequent reads
    /// (a helper process on Ceph's Python binding) instead of a `ceph`
    /// process per read [default: true with the plain `ceph`, false when
    /// `bin` names another program: a wrapper or a container shim reaches
    /// the cluster its own way, which the session would bypass]; false
    /// runs `bin` for everything.
    pub session: Option<bool>,
    /// The Python with Ceph's binding (python3-rados) for the session, and
    /// with which a database in RADOS reads its VFS's lock settings (of the
    /// VFS's release) [default: /usr/bin/python3].
    pub python: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemovalFile {
    /// At most this many OSDs drain at once (cephadm's max_osd_draining_count).
    pub max_draining: Option<usize>,
    /// How often the removal worker looks at the cluster.
    pub interval_s: Option<u64>,
    /// A drain whose data still to move has not fallen for this long is
    /// shown as stalled (no ETA, the cluster's reason if it gives one).
    pub stall_after_s: Option<u64>,
}

/// Validated settings the daemon runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// A local file, or a database in RADOS shared by active/standby daemons.
    pub db: DbLocation,
    /// Create the RADOS pool `db` names when it is missing.
    pub create_pool: bool,
    pub token: Option<String>,
    /// Each host's agent token is derived from it.
    pub agent_key: Option<AgentKey>,
    /// What agents not yet on their own token take (`agent_client::credentials`).
    pub agent_fallback: Option<Fallback>,
    pub log_format: LogFormat,
    pub poll_interval: Duration,
    pub poll_timeout: Duration,
    pub poll_concurrency: usize,
    pub max_backoff: Duration,
    pub reconcile: bool,
    pub reconcile_interval: Duration,
    pub command_timeout: Duration,
    pub max_body_bytes: usize,
    pub ceph_conf: Option<PathBuf>,
    pub ceph_bin: String,
    pub osdmaptool: String,
    pub rados_bin: String,
    pub ceph_timeout: Duration,
    /// `ceph.bench_slack_s`; `None`: a pass's own seconds + 60 s.
    pub bench_slack: Option<Duration>,
    pub ceph_name: Option<String>,
    pub ceph_keyring: Option<PathBuf>,
    /// The Python the cluster session runs on; `None`: no session.
    pub ceph_session: Option<String>,
    /// The Python with Ceph's binding (`ceph.python`), whatever the session:
    /// a database in RADOS reads its VFS's lock settings with it.
    pub ceph_python: String,
    pub max_draining: usize,
    pub removal_interval: Duration,
    pub stall_after: Duration,
    pub tls: Option<crate::tls::TlsFiles>,
    pub agent_ca: Option<PathBuf>,
    /// The API server's timeouts and connection cap.
    pub http: crate::http_server::ServerLimits,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("config file {path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{0}")]
    Unsafe(String),
    #[error("{0}")]
    Db(String),
}

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8740";
/// The database when neither the file nor a flag names one.
pub const DEFAULT_DB: &str = "osdkeeper.db";

/// Command-line and environment values that override the file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
    pub db: Option<PathBuf>,
    pub create_pool: bool,
    pub token: Option<String>,
    pub agent_token: Option<String>,
    /// Win over the file's `token_file` / `agent_token_file` / `agents.key_file`.
    pub token_file: Option<PathBuf>,
    pub agent_token_file: Option<PathBuf>,
    pub agent_key_file: Option<PathBuf>,
    /// Wins over `agents.previous_key_file`.
    pub agent_previous_key_file: Option<PathBuf>,
    pub log_format: Option<LogFormat>,
    pub ceph_conf: Option<PathBuf>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub agent_ca: Option<PathBuf>,
}

impl FileConfig {
    pub fn read(path: &Path) -> Result<FileConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
        Self::parse(&text).map_err(|message| ConfigError::Invalid { path: path.into(), message })
    }

    pub fn parse(text: &str) -> Result<FileConfig, String> {
        let docs = yaml11::load_all(text).map_err(|e| e.to_string())?;
        let value = match docs.as_slice() {
            [] => return Ok(FileConfig::default()),
            [one] if one.value.is_null() => return Ok(FileConfig::default()),
            [one] => one.value.to_json(),
            _ => return Err("expected a single YAML document".into()),
        };
        serde_json::from_value(value).map_err(|e| e.to_string())
    }
}

/// The API server's limits: the file's, else the defaults.
fn http_limits(file: &HttpFile) -> crate::http_server::ServerLimits {
    use crate::http_server::{DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
    let secs = |v: Option<u64>, default: Duration| v.map_or(default, |s| Duration::from_secs(s.max(1)));
    crate::http_server::ServerLimits {
        header_read_timeout: secs(file.header_read_timeout_s, DEFAULT_HEADER_READ_TIMEOUT),
        request_timeout: secs(file.request_timeout_s, DEFAULT_REQUEST_TIMEOUT),
        max_connections: file.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS).max(1),
    }
}

/// The `db` value given, read as a location (`ceph:` or a file), or the default file.
pub fn database(given: Option<PathBuf>) -> Result<DbLocation, ConfigError> {
    let Some(given) = given else { return Ok(DbLocation::File(PathBuf::from(DEFAULT_DB))) };
    match given.to_str() {
        Some(text) => DbLocation::parse(text).map_err(ConfigError::Db),
        None => Ok(DbLocation::File(given)),
    }
}

fn read_secret(path: &Path) -> Result<String, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
    Ok(text.trim().to_string())
}

impl Config {
    /// Whether the daemon sends the agents a secret (then never in clear
    /// off loopback).
    pub fn sends_agent_secrets(&self) -> bool {
        self.agent_key.is_some() || self.agent_fallback.is_some()
    }

    pub fn resolve(file: FileConfig, o: Overrides) -> Result<Config, ConfigError> {
        let own_ceph_bin = file.ceph.bin.is_some();
        let python = file.ceph.python.clone().unwrap_or_else(|| "/usr/bin/python3".into());
        let token_file = o.token_file.or(file.token_file.clone());
        let agent_token_file = o.agent_token_file.or(file.agent_token_file.clone());
        let token = match (o.token, &token_file) {
            (Some(t), _) => Some(t),
            (None, Some(p)) => Some(read_secret(p)?),
            (None, None) => None,
        }
        .filter(|t| !t.is_empty());
        let agent_token = match (o.agent_token, &agent_token_file) {
            (Some(t), _) => Some(t),
            (None, Some(p)) => Some(read_secret(p)?),
            (None, None) => None,
        }
        .filter(|t| !t.is_empty());
        let key_file = o.agent_key_file.or(file.agents.key_file.clone());
        let previous_key_file = o.agent_previous_key_file.or(file.agents.previous_key_file.clone());
        let (agent_key, agent_fallback) =
            agent_secrets::agent_secrets(key_file.as_deref(), previous_key_file.as_deref(), agent_token)?;
        let listen = o.listen.or(file.listen).unwrap_or_else(|| DEFAULT_LISTEN.parse().expect("default address"));
        if token.is_none() && !listen.ip().is_loopback() {
            return Err(ConfigError::Unsafe(format!(
                "refusing to listen on {listen} without a token: set OSDKEEPER_TOKEN (or token_file) \
                 or listen on a loopback address"
            )));
        }
        let tls = match (o.tls_cert.or(file.tls.cert), o.tls_key.or(file.tls.key)) {
            (Some(cert), Some(key)) => Some(crate::tls::TlsFiles { cert, key }),
            (None, None) => None,
            _ => return Err(ConfigError::Unsafe("give both a TLS certificate and its key (tls.cert, tls.key)".into())),
        };
        if tls.is_none() && !listen.ip().is_loopback() {
            return Err(ConfigError::Unsafe(format!(
                "refusing to serve plain HTTP on {listen}: tokens would cross the network readable; give \
                 --tls-cert and --tls-key (or tls.cert, tls.key; `osdkeeper certs` makes them), or listen on loopback"
            )));
        }
        let db = database(o.db.or(file.db))?;
        if o.create_pool && db.file().is_some() {
            return Err(ConfigError::Db(format!(
                "--create-pool is for a database in RADOS (ceph:POOL/NAMESPACE/NAME), not the file {db}"
            )));
        }
        let secs = |v: Option<u64>, default: u64| Duration::from_secs(v.unwrap_or(default).max(1));
        Ok(Config {
            listen,
            db,
            create_pool: o.create_pool,
            token,
            agent_key,
            agent_fallback,
            log_format: o.log_format.or(file.log_format).unwrap_or(LogFormat::Human),
            poll_interval: secs(file.poll.interval_s, 60),
            poll_timeout: secs(file.poll.timeout_s, 10),
            poll_concurrency: file.poll.concurrency.unwrap_or(16).max(1),
            max_backoff: secs(file.poll.max_backoff_s, 600),
            reconcile: file.reconcile.enabled.unwrap_or(true),
            reconcile_interval: secs(file.reconcile.interval_s, 60),
            command_timeout: secs(file.reconcile.command_timeout_s, 1800),
            max_body_bytes: file.max_body_bytes.unwrap_or(1 << 20),
            ceph_conf: o.ceph_conf.or(file.ceph.conf),
            ceph_bin: file.ceph.bin.unwrap_or_else(|| "ceph".into()),
            osdmaptool: file.ceph.osdmaptool.unwrap_or_else(|| "osdmaptool".into()),
            rados_bin: file.ceph.rados_bin.unwrap_or_else(|| "rados".into()),
            ceph_timeout: secs(file.ceph.timeout_s, 30),
            bench_slack: file.ceph.bench_slack_s.map(Duration::from_secs),
            ceph_name: file.ceph.name,
            ceph_keyring: file.ceph.keyring,
            ceph_session: file.ceph.session.unwrap_or(!own_ceph_bin).then(|| python.clone()),
            ceph_python: python,
            max_draining: file.removal.max_draining.unwrap_or(10).max(1),
            removal_interval: secs(file.removal.interval_s, 5),
            stall_after: secs(file.removal.stall_after_s, 600),
            tls,
            agent_ca: o.agent_ca.or(file.agents.ca),
            http: http_limits(&file.http),
        })
    }
}

#[cfg(test)]
mod tests;
