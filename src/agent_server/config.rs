//! The agent's settings, checked before anything listens: the token (never
//! shown, never the daemon's agent key), the listen address (loopback only without a token), the device
//! list, how OSD daemons are stopped, and the timeouts.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::agent_server::inventory::device_list::is_loop_device;
use crate::agent_server::osd::stop::{ControlMethod, TemplateError, DEFAULT_UNIT_TEMPLATE};
use crate::http_server::ServerLimits;

/// The bearer token clients must present. Debug output hides it.
#[derive(Clone)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<hidden>)")
    }
}

impl Token {
    /// Compares in time that depends only on the token's length, so a
    /// client cannot learn it byte by byte from response times.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let expected = self.0.as_bytes();
        let mut diff = expected.len() ^ presented.len();
        for (i, e) in expected.iter().enumerate() {
            let p = presented.get(i).copied().unwrap_or(0);
            diff |= usize::from(e ^ p);
        }
        std::hint::black_box(diff) == 0
    }
}

/// Everything the agent runs with.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub listen: SocketAddr,
    pub host_name: String,
    /// `--devices`, resolved to device paths.
    pub devices: Option<BTreeSet<String>>,
    pub inventory_file: Option<PathBuf>,
    pub token: Option<Token>,
    pub ceph_volume: String,
    pub ceph_volume_timeout: Duration,
    pub inventory_timeout: Duration,
    pub osd_stop: ControlMethod,
    pub osd_stop_timeout: Duration,
    /// How OSDs are started: systemd's unit (the same as for stopping), or
    /// `--osd-start-command`.
    pub osd_start: ControlMethod,
    pub osd_start_timeout: Duration,
    /// HTTPS with this certificate and key; required off loopback.
    pub tls: Option<crate::tls::TlsFiles>,
    /// Only ceph-osd processes running with this ceph.conf are this host's
    /// OSDs (a host running daemons of two clusters).
    pub osd_cluster_conf: Option<PathBuf>,
    /// Where ceph-volume makes the OSD data dirs (`--osd-data-dir`).
    pub osd_data_dir: PathBuf,
    /// For how long after a boot the OSDs' LVs are looked after
    /// (`boot_activation`); zero: not at all.
    pub boot_activation_window: Duration,
    /// The HTTP server's timeouts and connection cap.
    pub http: ServerLimits,
}

/// The settings as given on the command line and in the environment.
#[derive(Debug, Clone, Default)]
pub struct RawSettings {
    pub listen: Option<SocketAddr>,
    pub host_name: Option<String>,
    pub devices: Vec<String>,
    pub inventory_file: Option<PathBuf>,
    /// `OSDKEEPER_AGENT_TOKEN`.
    pub token_env: Option<String>,
    pub token_file: Option<PathBuf>,
    pub ceph_volume: Option<String>,
    pub ceph_volume_timeout_s: u64,
    pub inventory_timeout_s: u64,
    /// `--osd-unit-template` (default `ceph-osd@{id}`).
    pub osd_unit_template: Option<String>,
    /// `--osd-stop-command`, which wins over the unit template.
    pub osd_stop_command: Option<String>,
    pub osd_stop_timeout_s: u64,
    /// `--osd-start-command`, which wins over the unit template.
    pub osd_start_command: Option<String>,
    pub osd_start_timeout_s: u64,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub osd_cluster_conf: Option<PathBuf>,
    /// `--osd-data-dir` (default `/var/lib/ceph/osd`).
    pub osd_data_dir: Option<PathBuf>,
    /// `--boot-activation-window-s`; 0 turns the looks off.
    pub boot_activation_window_s: u64,
    /// `--header-read-timeout-s`, `--request-timeout-s`, `--max-connections`
    /// (`http_server`); None: the defaults.
    pub header_read_timeout_s: Option<u64>,
    pub request_timeout_s: Option<u64>,
    pub max_connections: Option<usize>,
}

/// The default address is loopback: a token is needed for anything else.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8741";
const DEFAULT_PORT: u16 = crate::wire::agent::AGENT_PORT;
/// Connections served at once: the agent's clients are the daemon and its
/// standbys, a few connections each; the unit's `LimitNOFILE` is far above.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "refusing to listen on {0} without a token: set OSDKEEPER_AGENT_TOKEN (or --token-file), \
         or listen on a loopback address such as 127.0.0.1"
    )]
    NoToken(SocketAddr),
    #[error("cannot read the token file {path}: {source}")]
    TokenFile { path: String, source: std::io::Error },
    #[error("the token file {0} is empty")]
    EmptyTokenFile(String),
    #[error(
        "the token given is the daemon's agent key, which must stay on the daemon's machine: give this agent \
         its host's own token (`osdkeeper agent-token HOST` there prints it)"
    )]
    KeyAsToken,
    #[error("--devices: {path} is not a device path (expected /dev/...)")]
    NotADevice { path: String },
    #[error("--devices: {path}: {source}")]
    DeviceLink { path: String, source: std::io::Error },
    #[error("--{name} must be at least 1 second")]
    ZeroTimeout { name: &'static str },
    #[error("--max-connections must be at least 1")]
    ZeroConnections,
    #[error("cannot tell this host's name ({0}); give it with --host-name")]
    HostName(String),
    #[error("--host-name must not be empty")]
    EmptyHostName,
    #[error("--osd-unit-template {template:?} {source}")]
    UnitTemplate { template: String, source: TemplateError },
    #[error("--osd-stop-command {template:?} {source}")]
    StopCommand { template: String, source: TemplateError },
    #[error("--osd-start-command {template:?} {source}")]
    StartCommand { template: String, source: TemplateError },
    #[error(
        "refusing to serve plain HTTP on {0}: the agent token would cross the network readable; give --tls-cert \
         and --tls-key (`osdkeeper certs` makes them), or listen on loopback"
    )]
    PlainHttp(SocketAddr),
    #[error("give both --tls-cert and --tls-key")]
    HalfTls,
}

impl AgentConfig {
    pub fn resolve(raw: RawSettings) -> Result<AgentConfig, ConfigError> {
        let listen = raw.listen.unwrap_or_else(|| SocketAddr::from((Ipv4Addr::LOCALHOST, DEFAULT_PORT)));
        let token = match (raw.token_env.filter(|t| !t.is_empty()), &raw.token_file) {
            (Some(t), file) => {
                if let Some(file) = file {
                    tracing::info!(file = %file.display(), "OSDKEEPER_AGENT_TOKEN is set; --token-file is not read");
                }
                Some(Token(t))
            }
            (None, Some(file)) => Some(read_token_file(file)?),
            (None, None) => None,
        };
        if token.is_none() && !listen.ip().is_loopback() {
            return Err(ConfigError::NoToken(listen));
        }
        if token.as_ref().is_some_and(|t| crate::wire::agent_token::looks_like_key(&t.0)) {
            return Err(ConfigError::KeyAsToken);
        }
        let tls = match (raw.tls_cert, raw.tls_key) {
            (Some(cert), Some(key)) => Some(crate::tls::TlsFiles { cert, key }),
            (None, None) => None,
            _ => return Err(ConfigError::HalfTls),
        };
        if tls.is_none() && !listen.ip().is_loopback() {
            return Err(ConfigError::PlainHttp(listen));
        }
        let host_name = match raw.host_name {
            Some(h) if h.trim().is_empty() => return Err(ConfigError::EmptyHostName),
            Some(h) => h.trim().to_string(),
            None => system_host_name()?,
        };
        let devices = if raw.devices.is_empty() {
            None
        } else {
            Some(raw.devices.iter().map(|d| resolve_device(d)).collect::<Result<BTreeSet<_>, _>>()?)
        };
        for (name, secs) in [
            ("ceph-volume-timeout-s", raw.ceph_volume_timeout_s),
            ("inventory-timeout-s", raw.inventory_timeout_s),
            ("osd-stop-timeout-s", raw.osd_stop_timeout_s),
            ("osd-start-timeout-s", raw.osd_start_timeout_s),
            ("header-read-timeout-s", raw.header_read_timeout_s.unwrap_or(1)),
            ("request-timeout-s", raw.request_timeout_s.unwrap_or(1)),
        ] {
            if secs == 0 {
                return Err(ConfigError::ZeroTimeout { name });
            }
        }
        if raw.max_connections == Some(0) {
            return Err(ConfigError::ZeroConnections);
        }
        let unit_template = raw.osd_unit_template.as_deref().unwrap_or(DEFAULT_UNIT_TEMPLATE);
        let by_unit = ControlMethod::systemd(unit_template)
            .map_err(|source| ConfigError::UnitTemplate { template: unit_template.to_string(), source })?;
        let osd_stop = match &raw.osd_stop_command {
            Some(t) => {
                ControlMethod::command(t).map_err(|source| ConfigError::StopCommand { template: t.clone(), source })?
            }
            None => by_unit.clone(),
        };
        let osd_start = match &raw.osd_start_command {
            Some(t) => {
                ControlMethod::command(t).map_err(|source| ConfigError::StartCommand { template: t.clone(), source })?
            }
            None => by_unit,
        };
        Ok(AgentConfig {
            listen,
            host_name,
            devices,
            inventory_file: raw.inventory_file,
            token,
            ceph_volume: raw.ceph_volume.unwrap_or_else(|| "ceph-volume".into()),
            ceph_volume_timeout: Duration::from_secs(raw.ceph_volume_timeout_s),
            inventory_timeout: Duration::from_secs(raw.inventory_timeout_s),
            osd_stop,
            osd_stop_timeout: Duration::from_secs(raw.osd_stop_timeout_s),
            osd_start,
            osd_start_timeout: Duration::from_secs(raw.osd_start_timeout_s),
            tls,
            osd_cluster_conf: raw.osd_cluster_conf,
            osd_data_dir: raw
                .osd_data_dir
                .unwrap_or_else(|| PathBuf::from(crate::agent_server::host_roots::DEFAULT_OSD_DATA)),
            boot_activation_window: Duration::from_secs(raw.boot_activation_window_s),
            http: http_limits(raw.header_read_timeout_s, raw.request_timeout_s, raw.max_connections),
        })
    }

    /// True when `--devices` names a loop device, which only the kernel
    /// reader reports.
    pub fn names_loop_devices(&self) -> bool {
        self.devices.iter().flatten().any(|d| is_loop_device(d))
    }
}

fn http_limits(header_s: Option<u64>, request_s: Option<u64>, connections: Option<usize>) -> ServerLimits {
    use crate::http_server::{DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
    let secs = |v: Option<u64>, default| v.map_or(default, Duration::from_secs);
    ServerLimits {
        header_read_timeout: secs(header_s, DEFAULT_HEADER_READ_TIMEOUT),
        request_timeout: secs(request_s, DEFAULT_REQUEST_TIMEOUT),
        max_connections: connections.unwrap_or(DEFAULT_MAX_CONNECTIONS),
    }
}

fn read_token_file(path: &Path) -> Result<Token, ConfigError> {
    let shown = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|source| ConfigError::TokenFile { path: shown.clone(), source })?;
    let t = text.trim();
    if t.is_empty() {
        return Err(ConfigError::EmptyTokenFile(shown));
    }
    Ok(Token(t.to_string()))
}

/// A by-id or by-path link is replaced by the device it points to, since
/// inventories name devices by their kernel path.
fn resolve_device(given: &str) -> Result<String, ConfigError> {
    if !given.starts_with("/dev/") {
        return Err(ConfigError::NotADevice { path: given.to_string() });
    }
    let path = Path::new(given);
    if !path.is_symlink() {
        return Ok(given.to_string());
    }
    let real = std::fs::canonicalize(path).map_err(|source| ConfigError::DeviceLink { path: given.into(), source })?;
    let real = real.display().to_string();
    // device-mapper devices are reported under /dev/mapper, not as dm-N.
    if real.starts_with("/dev/dm-") {
        return Ok(given.to_string());
    }
    Ok(real)
}

fn system_host_name() -> Result<String, ConfigError> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map_err(|e| ConfigError::HostName(e.to_string()))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(ConfigError::HostName("the system host name is empty".into()));
    }
    Ok(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw() -> RawSettings {
        RawSettings {
            host_name: Some("h1".into()),
            ceph_volume_timeout_s: 1800,
            inventory_timeout_s: 120,
            osd_stop_timeout_s: 60,
            osd_start_timeout_s: 60,
            ..Default::default()
        }
    }

    #[test]
    fn tokens_compare_whole() {
        let t = Token("s3cret".into());
        assert!(t.matches(b"s3cret"));
        for wrong in [&b"s3cre"[..], b"s3cret!", b"S3cret", b"", b"s3cres"] {
            assert!(!t.matches(wrong), "{}", String::from_utf8_lossy(wrong));
        }
        assert_eq!(format!("{t:?}"), "Token(<hidden>)");
    }

    #[test]
    fn no_token_means_loopback_only() {
        let c = AgentConfig::resolve(raw()).unwrap();
        assert_eq!(c.listen.to_string(), DEFAULT_LISTEN);
        assert!(c.token.is_none());
        let public = RawSettings { listen: Some("0.0.0.0:8741".parse().unwrap()), ..raw() };
        let e = AgentConfig::resolve(public.clone()).unwrap_err();
        assert!(e.to_string().starts_with("refusing to listen on 0.0.0.0:8741 without a token"), "{e}");
        // An empty variable is no token.
        let empty = RawSettings { token_env: Some(String::new()), ..public.clone() };
        assert!(matches!(AgentConfig::resolve(empty), Err(ConfigError::NoToken(_))));
        // A token alone no longer opens the agent: it would travel in clear.
        let with = RawSettings { token_env: Some("t".into()), ..public };
        assert!(matches!(AgentConfig::resolve(with.clone()), Err(ConfigError::PlainHttp(_))));
        let tls = RawSettings { tls_cert: Some("c.pem".into()), tls_key: Some("k.pem".into()), ..with };
        assert!(AgentConfig::resolve(tls.clone()).unwrap().token.is_some());
        let half = RawSettings { tls_key: None, ..tls };
        assert!(matches!(AgentConfig::resolve(half), Err(ConfigError::HalfTls)));
        let v6 = RawSettings { listen: Some("[::1]:1".parse().unwrap()), ..raw() };
        assert!(AgentConfig::resolve(v6).is_ok());
    }

    #[test]
    fn token_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("token");
        std::fs::write(&f, "abc\n").unwrap();
        let c = AgentConfig::resolve(RawSettings { token_file: Some(f.clone()), ..raw() }).unwrap();
        assert!(c.token.unwrap().matches(b"abc"));
        // The environment wins, as for the daemon.
        let c =
            AgentConfig::resolve(RawSettings { token_file: Some(f.clone()), token_env: Some("env".into()), ..raw() })
                .unwrap();
        assert!(c.token.unwrap().matches(b"env"));
        std::fs::write(&f, "\n").unwrap();
        assert!(matches!(
            AgentConfig::resolve(RawSettings { token_file: Some(f.clone()), ..raw() }),
            Err(ConfigError::EmptyTokenFile(_))
        ));
        let missing = RawSettings { token_file: Some(dir.path().join("nope")), ..raw() };
        assert!(matches!(AgentConfig::resolve(missing), Err(ConfigError::TokenFile { .. })));
        // The daemon's key is no token: it would open every host's agent.
        let key = crate::wire::agent_token::AgentKey::from_random(&[3; 32]);
        std::fs::write(&f, key.text()).unwrap();
        let e = AgentConfig::resolve(RawSettings { token_file: Some(f.clone()), ..raw() }).unwrap_err();
        assert!(matches!(e, ConfigError::KeyAsToken), "{e}");
        std::fs::write(&f, key.token_for("h1")).unwrap();
        assert!(AgentConfig::resolve(RawSettings { token_file: Some(f), ..raw() }).is_ok());
    }

    #[test]
    fn devices_and_timeouts() {
        let c = AgentConfig::resolve(RawSettings { devices: vec!["/dev/loop7".into(), "/dev/sdb".into()], ..raw() })
            .unwrap();
        assert!(c.names_loop_devices());
        assert_eq!(c.devices.unwrap().len(), 2);
        let e = AgentConfig::resolve(RawSettings { devices: vec!["sdb".into()], ..raw() }).unwrap_err();
        assert_eq!(e.to_string(), "--devices: sdb is not a device path (expected /dev/...)");
        let e = AgentConfig::resolve(RawSettings { ceph_volume_timeout_s: 0, ..raw() }).unwrap_err();
        assert_eq!(e.to_string(), "--ceph-volume-timeout-s must be at least 1 second");
        assert!(is_loop_device("/dev/loop12") && !is_loop_device("/dev/loop") && !is_loop_device("/dev/loop0p1"));
        assert!(matches!(
            AgentConfig::resolve(RawSettings { host_name: Some(" ".into()), ..raw() }),
            Err(ConfigError::EmptyHostName)
        ));
    }

    #[test]
    fn how_osds_are_stopped() {
        let c = AgentConfig::resolve(raw()).unwrap();
        assert_eq!(c.osd_stop.argv(4), ["systemctl", "stop", "ceph-osd@4"]);
        assert_eq!(c.osd_stop_timeout, Duration::from_secs(60));
        let cephadm = RawSettings { osd_unit_template: Some("ceph-0a1b@osd.{id}".into()), ..raw() };
        assert_eq!(AgentConfig::resolve(cephadm).unwrap().osd_stop.argv(3), ["systemctl", "stop", "ceph-0a1b@osd.3"]);
        // The command wins over the unit template.
        let both = RawSettings {
            osd_unit_template: Some("ceph-0a1b@osd.{id}".into()),
            osd_stop_command: Some("testbed/ceph-sandbox/stop.sh /tmp/sb osd.{id}".into()),
            ..raw()
        };
        assert_eq!(
            AgentConfig::resolve(both).unwrap().osd_stop.argv(4),
            ["testbed/ceph-sandbox/stop.sh", "/tmp/sb", "osd.4"]
        );
        let e = AgentConfig::resolve(RawSettings { osd_stop_command: Some("stop-all".into()), ..raw() }).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--osd-stop-command \"stop-all\" must contain {id} (otherwise every OSD would be stopped the same way)"
        );
        let e = AgentConfig::resolve(RawSettings { osd_unit_template: Some("a b{id}".into()), ..raw() }).unwrap_err();
        assert!(e.to_string().starts_with("--osd-unit-template \"a b{id}\" does not make a systemd unit name"), "{e}");
        let e = AgentConfig::resolve(RawSettings { osd_stop_timeout_s: 0, ..raw() }).unwrap_err();
        assert_eq!(e.to_string(), "--osd-stop-timeout-s must be at least 1 second");
    }
}
