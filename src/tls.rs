//! TLS for every hop, with rustls (and its `ring` provider): the daemon's
//! API and the agents serve HTTPS from a PEM certificate and key; the
//! daemon checks agents, and the CLI the daemon, against a CA file given to
//! them (not the system's roots: these are a cluster's own certificates,
//! made with `osdkeeper certs` or the operator's PKI). Plain HTTP is left
//! for loopback listeners, which `config` and the agent's config enforce.
//! `http_server` serves with the server config made here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {what} {path}: {source}")]
    Read { what: &'static str, path: PathBuf, source: std::io::Error },
    #[error("{path} holds no {what} in PEM form")]
    Empty { what: &'static str, path: PathBuf },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// A server certificate (with its chain) and its private key, PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read { what, path: path.into(), source })
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The server side: TLS 1.2 and 1.3, no client certificates (the agent
/// token, and the API's tokens, authenticate the client).
pub fn server_config(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let cert_pem = read("the certificate", &files.cert)?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::Invalid { path: files.cert.clone(), message: e.to_string() })?;
    if certs.is_empty() {
        return Err(TlsError::Empty { what: "certificate", path: files.cert.clone() });
    }
    let key_pem = read("the private key", &files.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| TlsError::Invalid { path: files.key.clone(), message: format!("no private key: {e}") })?;
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Invalid { path: files.cert.clone(), message: e.to_string() })?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::Invalid { path: files.cert.clone(), message: e.to_string() })?;
    Ok(Arc::new(config))
}

/// The CA certificates in a PEM file, for a client to trust (and only them).
pub fn trusted(ca: &Path) -> Result<Vec<reqwest::Certificate>, TlsError> {
    let pem = read("the CA file", ca)?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| TlsError::Invalid { path: ca.into(), message: e.to_string() })?;
    if certs.is_empty() {
        return Err(TlsError::Empty { what: "CA certificate", path: ca.into() });
    }
    Ok(certs)
}

/// A client that trusts exactly the CA in `ca` (when given) for `https://`.
pub fn client_builder(ca: Option<&Path>) -> Result<reqwest::ClientBuilder, TlsError> {
    let mut b = reqwest::Client::builder().use_rustls_tls().tls_built_in_root_certs(false);
    if let Some(ca) = ca {
        for c in trusted(ca)? {
            b = b.add_root_certificate(c);
        }
    }
    Ok(b)
}

/// Whether a request failed in the TLS handshake (a certificate not of the
/// trusted CA, a name that does not match, ...), rather than on the way.
pub fn handshake_failed(err: &(dyn std::error::Error + 'static)) -> bool {
    if err.is::<rustls::Error>() {
        return true;
    }
    // io::Error's source() skips the error it wraps (hyper nests two): look inside.
    let inner = err.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref());
    inner.is_some_and(|i| handshake_failed(i)) || err.source().is_some_and(handshake_failed)
}

/// Whether a secret sent to `url` stays private from the network: over
/// TLS, or over plain HTTP that never leaves this machine (loopback).
/// Unparsable URLs count as unsafe; sending will report them.
pub fn keeps_secrets(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else { return false };
    match url.scheme() {
        "https" => true,
        "http" => {
            let host = url.host_str().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
            match host.parse::<std::net::IpAddr>() {
                Ok(ip) => ip.is_loopback(),
                Err(_) => host.eq_ignore_ascii_case("localhost"),
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::keeps_secrets;

    #[test]
    fn secrets_travel_over_tls_or_stay_on_loopback() {
        for safe in [
            "https://osd-admin:8740",
            "http://127.0.0.1:8740",
            "http://127.8.0.3",
            "http://[::1]:1",
            "http://LocalHost:8740/",
        ] {
            assert!(keeps_secrets(safe), "{safe}");
        }
        for unsafe_ in [
            "http://10.0.0.5:8740",
            "http://osd-admin:8740",
            "http://[fe80::1]:1",
            "ftp://127.0.0.1",
            "127.0.0.1:8740",
            "",
        ] {
            assert!(!keeps_secrets(unsafe_), "{unsafe_}");
        }
    }
}
