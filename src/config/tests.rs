//! Reading the configuration file and the command line's overrides.

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
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/osdkeeper.example.yaml")).unwrap();
    FileConfig::parse(&text).unwrap();
    let uncommented: String = text
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if ["tls:", "agents:", "  cert:", "  key:", "  ca:"].iter().any(|k| rest.starts_with(k)) => rest,
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
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/osdkeeper.example.yaml")).unwrap();
    let key = regex::Regex::new(r"^( *)# ( *[a-z_]+:( .*)?)$").unwrap();
    let all: String =
        text.lines().map(|l| key.captures(l).map_or(l.to_string(), |c| format!("{}{}", &c[1], &c[2])) + "\n").collect();
    let f = FileConfig::parse(&all).unwrap_or_else(|e| panic!("{e}\n{all}"));
    assert!(f.listen.is_some() && f.db.is_some() && f.log_format.is_some() && f.max_body_bytes.is_some());
    assert!(f.token_file.is_some() && f.agent_token_file.is_some());
    assert!(f.tls.cert.is_some() && f.tls.key.is_some() && f.agents.ca.is_some());
    assert!(f.agents.key_file.is_some() && f.agents.previous_key_file.is_some());
    let c = &f.ceph;
    assert!(c.conf.is_some() && c.bin.is_some() && c.timeout_s.is_some() && c.name.is_some() && c.keyring.is_some());
    assert!(c.session.is_some() && c.python.is_some());
    let p = &f.poll;
    assert!(p.interval_s.is_some() && p.timeout_s.is_some() && p.concurrency.is_some() && p.max_backoff_s.is_some());
    let r = &f.reconcile;
    assert!(r.enabled.is_some() && r.interval_s.is_some() && r.command_timeout_s.is_some());
    let m = &f.removal;
    assert!(m.max_draining.is_some() && m.interval_s.is_some() && m.stall_after_s.is_some());
    let h = &f.http;
    assert!(h.header_read_timeout_s.is_some() && h.request_timeout_s.is_some() && h.max_connections.is_some());
}

// The example shows the defaults, and they bound a client's hold: a
// half-sent request is cut off within a minute.
#[test]
fn the_http_limits_default_to_what_the_example_shows() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/osdkeeper.example.yaml")).unwrap();
    let shown = Config::resolve(FileConfig::parse(&text).unwrap(), Overrides::default()).unwrap().http;
    let default = Config::resolve(FileConfig::default(), Overrides::default()).unwrap().http;
    assert_eq!(shown, default);
    assert!(default.header_read_timeout <= Duration::from_secs(60), "{default:?}");
    assert!(default.request_timeout <= Duration::from_secs(60), "{default:?}");
    assert_eq!(default.max_connections, DEFAULT_MAX_CONNECTIONS);
}
