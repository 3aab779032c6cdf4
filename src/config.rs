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
}

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
    /// The Python with Ceph's binding (python3-rados) for the session
    /// [default: /usr/bin/python3].
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
    pub max_draining: usize,
    pub removal_interval: Duration,
    pub stall_after: Duration,
    pub tls: Option<crate::tls::TlsFiles>,
    pub agent_ca: Option<PathBuf>,
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
            ceph_session: file
                .ceph
                .session
                .unwrap_or(!own_ceph_bin)
                .then(|| file.ceph.python.clone().unwrap_or_else(|| "/usr/bin/python3".into())),
            max_draining: file.removal.max_draining.unwrap_or(10).max(1),
            removal_interval: secs(file.removal.interval_s, 5),
            stall_after: secs(file.removal.stall_after_s, 600),
            tls,
            agent_ca: o.agent_ca.or(file.agents.ca),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_then_overrides() {
        let file = FileConfig::parse("listen: 127.0.0.1:9000\npoll: {interval_s: 5}\n").unwrap();
        let c = Config::resolve(file.clone(), Overrides::default()).unwrap();
        assert_eq!(c.listen.port(), 9000);
        assert_eq!(c.poll_interval, Duration::from_secs(5));
        let c = Config::resolve(file, Overrides { listen: Some("127.0.0.1:1".parse().unwrap()), ..Default::default() })
            .unwrap();
        assert_eq!(c.listen.port(), 1);
    }

    #[test]
    fn the_session_is_on_for_the_plain_ceph_and_off_beside_a_bin_of_ones_own_unless_asked_for() {
        let session = |yaml: &str| {
            let file = FileConfig::parse(&format!("listen: 127.0.0.1:9000\n{yaml}")).unwrap();
            Config::resolve(file, Overrides::default()).unwrap().ceph_session
        };
        assert_eq!(session("ceph: {}\n").as_deref(), Some("/usr/bin/python3"));
        assert_eq!(session("ceph: {bin: /usr/local/bin/ceph-in-container}\n"), None);
        assert_eq!(session("ceph: {bin: /opt/ceph, session: true, python: /opt/py}\n").as_deref(), Some("/opt/py"));
        assert_eq!(session("ceph: {session: false}\n"), None);
    }

    #[test]
    fn unknown_keys_and_open_listeners_are_refused() {
        assert!(FileConfig::parse("pol: {}\n").unwrap_err().contains("pol"));
        let open = Overrides { listen: Some("0.0.0.0:8740".parse().unwrap()), ..Default::default() };
        assert!(matches!(Config::resolve(FileConfig::default(), open.clone()), Err(ConfigError::Unsafe(_))));
        let with_token = Overrides { token: Some("s3cret".into()), ..open };
        let plain = Config::resolve(FileConfig::default(), with_token.clone()).unwrap_err().to_string();
        assert!(plain.contains("refusing to serve plain HTTP"), "a token alone is not enough off loopback: {plain}");
        let with_tls = Overrides { tls_cert: Some("c.pem".into()), tls_key: Some("k.pem".into()), ..with_token };
        assert!(Config::resolve(FileConfig::default(), with_tls).is_ok());
        let half = Overrides { tls_cert: Some("c.pem".into()), ..Default::default() };
        assert!(Config::resolve(FileConfig::default(), half).is_err());
    }

    // The example file is what operators copy: it parses as shipped, and
    // with its TLS blocks uncommented the file's paths are used.
    #[test]
    fn the_example_config_parses_with_and_without_tls() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/osdkeeper.example.yaml")).unwrap();
        FileConfig::parse(&text).unwrap();
        let uncommented: String = text
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest) if ["tls:", "agents:", "  cert:", "  key:", "  ca:"].iter().any(|k| rest.starts_with(k)) => {
                    rest
                }
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let file = FileConfig::parse(&uncommented).unwrap();
        let open =
            Overrides { listen: Some("0.0.0.0:8740".parse().unwrap()), token: Some("t".into()), ..Default::default() };
        let c = Config::resolve(file, open).unwrap();
        assert_eq!(c.tls.unwrap().key, PathBuf::from("/etc/osdkeeper/pki/daemon-key.pem"));
        assert_eq!(c.agent_ca.unwrap(), PathBuf::from("/etc/osdkeeper/pki/ca.pem"));
    }

    // Every section the daemon reads is in the example, and with every
    // commented key uncommented it still parses (no stale key names).
    #[test]
    fn the_example_config_shows_every_section_and_key() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/osdkeeper.example.yaml")).unwrap();
        let key = regex::Regex::new(r"^( *)# ( *[a-z_]+:( .*)?)$").unwrap();
        let all: String = text
            .lines()
            .map(|l| key.captures(l).map_or(l.to_string(), |c| format!("{}{}", &c[1], &c[2])) + "\n")
            .collect();
        let f = FileConfig::parse(&all).unwrap_or_else(|e| panic!("{e}\n{all}"));
        assert!(f.listen.is_some() && f.db.is_some() && f.log_format.is_some() && f.max_body_bytes.is_some());
        assert!(f.token_file.is_some() && f.agent_token_file.is_some());
        assert!(f.tls.cert.is_some() && f.tls.key.is_some() && f.agents.ca.is_some());
        assert!(f.agents.key_file.is_some() && f.agents.previous_key_file.is_some());
        let c = &f.ceph;
        assert!(
            c.conf.is_some() && c.bin.is_some() && c.timeout_s.is_some() && c.name.is_some() && c.keyring.is_some()
        );
        assert!(c.session.is_some() && c.python.is_some());
        let p = &f.poll;
        assert!(
            p.interval_s.is_some() && p.timeout_s.is_some() && p.concurrency.is_some() && p.max_backoff_s.is_some()
        );
        let r = &f.reconcile;
        assert!(r.enabled.is_some() && r.interval_s.is_some() && r.command_timeout_s.is_some());
        let m = &f.removal;
        assert!(m.max_draining.is_some() && m.interval_s.is_some() && m.stall_after_s.is_some());
    }
}
