//! `osdkeeper certs --out DIR --daemon NAME,... [--host NAME,...]...`: a
//! small CA and certificates for a daemon and its hosts, for operators
//! without a PKI of their own. Each certificate names the host as the
//! daemon (or the CLI) reaches it: DNS names and IP addresses alike.
//!
//! DIR gets `ca.pem` (give it to the daemon as `agents.ca`, and to the CLI
//! as `--cacert`), `ca-key.pem` (keep it offline: it signs new hosts),
//! `daemon.pem` + `daemon-key.pem`, `HOST.pem` + `HOST-key.pem` per host;
//! and the agents' credentials: `agent-key` (the daemon's `agents.key_file`,
//! never on a storage host; `--agent-key FILE` takes the one the daemon
//! has instead of making one) and `HOST.agent-token` per host (that host's
//! `/etc/osdkeeper/agent-token`, derived from the key: it opens that
//! host's agent and no other). Keys and tokens are written readable by
//! their owner only.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

use super::exit;

/// How long the certificates are valid: long enough not to expire under a
/// running cluster unnoticed, short enough that a lost key does not last.
const VALID_DAYS: i64 = 2 * 365;

#[derive(clap::Args, Debug)]
pub struct CertsArgs {
    /// Where to write the files (created if missing; existing files are not overwritten).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The daemon's names and addresses, as the CLI and the dashboard reach it (comma-separated).
    #[arg(long, value_delimiter = ',', required = true, value_name = "NAME")]
    daemon: Vec<String>,
    /// One storage host: its name first (the file name), then other names or
    /// addresses the daemon reaches its agent by (comma-separated). Repeat per host.
    #[arg(long, value_name = "NAME,ADDR...")]
    host: Vec<String>,
    /// The daemon's agent key to derive the hosts' agent tokens from [default: a new one, written as DIR/agent-key].
    #[arg(long, value_name = "FILE")]
    agent_key: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
enum CertsError {
    #[error("{0}: {1}")]
    Generate(String, rcgen::Error),
    #[error("{} exists; remove it or choose another --out", .0.display())]
    Exists(PathBuf),
    #[error("cannot write {}: {source}", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Usage(String),
}

fn params(names: &[String], common_name: &str) -> Result<CertificateParams, CertsError> {
    let mut p = CertificateParams::new(names.to_vec()).map_err(|e| CertsError::Generate(common_name.into(), e))?;
    p.distinguished_name.push(DnType::CommonName, common_name);
    // A day back, so a host whose clock runs a little behind accepts it.
    let now = time::OffsetDateTime::now_utc();
    p.not_before = now - time::Duration::days(1);
    p.not_after = now + time::Duration::days(VALID_DAYS);
    Ok(p)
}

fn write(path: &Path, text: &str, private: bool) -> Result<(), CertsError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mode = if private { 0o600 } else { 0o644 };
    let mut f =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => CertsError::Exists(path.into()),
            _ => CertsError::Write { path: path.into(), source: e },
        })?;
    f.write_all(text.as_bytes()).map_err(|e| CertsError::Write { path: path.into(), source: e })
}

fn leaf(out: &Path, file: &str, names: &[String], ca: &Issuer<'_, KeyPair>) -> Result<(), CertsError> {
    let key = KeyPair::generate().map_err(|e| CertsError::Generate(file.into(), e))?;
    let cert = params(names, &names[0])?.signed_by(&key, ca).map_err(|e| CertsError::Generate(file.into(), e))?;
    write(&out.join(format!("{file}.pem")), &cert.pem(), false)?;
    write(&out.join(format!("{file}-key.pem")), &key.serialize_pem(), true)
}

/// The agent key given, or a new one written to DIR; each host's token.
fn agent_tokens(args: &CertsArgs, hosts: &[Vec<String>]) -> Result<Vec<PathBuf>, CertsError> {
    let mut written = Vec::new();
    let key = match &args.agent_key {
        Some(file) => super::agent_token::read_key(file).map_err(CertsError::Usage)?,
        None => {
            let key = super::agent_token::new_key().map_err(CertsError::Usage)?;
            let path = args.out.join("agent-key");
            write(&path, &format!("{}\n", key.text()), true)?;
            written.push(path);
            key
        }
    };
    for names in hosts {
        let path = args.out.join(format!("{}.agent-token", names[0]));
        write(&path, &format!("{}\n", key.token_for(&names[0])), true)?;
        written.push(path);
    }
    Ok(written)
}

fn make(args: &CertsArgs) -> Result<Vec<PathBuf>, CertsError> {
    let mut hosts = Vec::new();
    for h in &args.host {
        let names: Vec<String> = h.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
        let Some(first) = names.first() else { return Err(CertsError::Usage("--host needs a name".into())) };
        if !first.chars().all(|c| c.is_ascii_alphanumeric() || "-.".contains(c)) {
            return Err(CertsError::Usage(format!(
                "--host {first:?}: a host name (letters, digits, '-', '.') comes first"
            )));
        }
        hosts.push(names);
    }
    std::fs::create_dir_all(&args.out).map_err(|e| CertsError::Write { path: args.out.clone(), source: e })?;
    // The key first: a key file that cannot be read stops before any file is written.
    let credentials = agent_tokens(args, &hosts)?;
    let ca_key = KeyPair::generate().map_err(|e| CertsError::Generate("the CA".into(), e))?;
    let mut ca_params = params(&[], "osdkeeper CA")?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages =
        vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(|e| CertsError::Generate("the CA".into(), e))?;
    write(&args.out.join("ca-key.pem"), &ca_key.serialize_pem(), true)?;
    write(&args.out.join("ca.pem"), &ca_cert.pem(), false)?;
    let ca = Issuer::new(ca_params, ca_key);
    leaf(&args.out, "daemon", &args.daemon, &ca)?;
    for names in &hosts {
        leaf(&args.out, &names[0], names, &ca)?;
    }
    let mut written = vec![args.out.join("ca.pem"), args.out.join("daemon.pem")];
    written.extend(hosts.iter().map(|n| args.out.join(format!("{}.pem", n[0]))));
    written.extend(credentials);
    Ok(written)
}

pub fn run(args: CertsArgs) -> ExitCode {
    match make(&args) {
        Ok(files) => {
            for f in files {
                super::out::line(format!("wrote {}", f.display()));
            }
            super::out::line(
                "keys (*-key.pem, agent-key) and agent tokens are readable by you only; keep ca-key.pem offline, \
                 agent-key on the daemon's machine only, each HOST.agent-token on its host only",
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("osdkeeper certs: {e}");
            ExitCode::from(exit::UNREADABLE)
        }
    }
}
