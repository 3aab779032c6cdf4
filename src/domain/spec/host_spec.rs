//! Host specs (cephadm's `HostSpec`, `service_type: host`): the documents
//! of an applied file that add hosts, as `ceph orch apply -i` takes them
//! beside OSD specs. The address is the host's agent's (HOST:PORT), where
//! cephadm's is the SSH target: an address without a port gets the port
//! the caller gives (the packaged agent's), and without an address the
//! host name is the address, as in cephadm. Labels are a list or one string.
//!
//! Stricter than cephadm (which ignores keys it does not know): an unknown
//! key is refused, and so are `location` (osdkeeper does not move hosts in
//! CRUSH), a `status` other than empty (maintenance is not osdkeeper's) and
//! `oob`.

use std::net::Ipv6Addr;

use super::error::{FieldError, SpecError};
use super::placement::valid_host;
use crate::domain::value::Value;

/// One host to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    pub hostname: String,
    /// HOST:PORT of its agent.
    pub addr: String,
    pub labels: Vec<String>,
}

/// Whether a document is a host spec (`service_type: host`).
pub fn is_host_spec(doc: &Value) -> bool {
    doc.get("service_type").and_then(Value::as_str) == Some("host")
}

/// A host spec document to a `HostSpec`, or the field that is wrong.
/// `port`: the one an address without a port is given.
pub fn read_host_spec(doc: &Value, index: usize, line: usize, port: u16) -> Result<HostSpec, SpecError> {
    let name = doc.get("hostname").and_then(Value::as_str).map(str::to_string);
    read(doc, port).map_err(|e| e.locate(index, line, name))
}

fn read(doc: &Value, port: u16) -> Result<HostSpec, FieldError> {
    let Value::Map(entries) = doc else { unreachable!("a host spec is a mapping: is_host_spec") };
    for (key, value) in entries {
        let key = key.as_str().unwrap_or_default();
        match key {
            "service_type" | "hostname" | "addr" | "labels" => {}
            "status" if !value.truthy() => {}
            "status" => return Err(refused("status", value, "host maintenance is not osdkeeper's; leave status out")),
            "location" => {
                return Err(refused(key, value, "osdkeeper does not set CRUSH locations; leave location out"))
            }
            _ => return Err(refused(key, value, "not a key of a host spec (hostname, addr, labels)")),
        }
    }
    let hostname = match doc.get("hostname") {
        Some(Value::Str(s)) => s.clone(),
        Some(other) => return Err(FieldError::cephadm("hostname", Some(other.display()), "hostname must be a string")),
        None => return Err(FieldError::cephadm("hostname", None, "a host spec needs a hostname")),
    };
    valid_host(&hostname).map_err(|why| FieldError::cephadm("hostname", Some(hostname.clone()), why))?;
    let addr = match doc.get("addr") {
        None | Some(Value::Null) => hostname.clone(),
        Some(Value::Str(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(other) => return Err(FieldError::cephadm("addr", Some(other.display()), "addr must be an address")),
    };
    let labels = match doc.get("labels") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Str(s)) => vec![s.clone()],
        Some(Value::Seq(items)) => items
            .iter()
            .map(|l| match l {
                Value::Str(s) => Ok(s.clone()),
                other => Err(FieldError::cephadm("labels", Some(other.display()), "a label is a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(FieldError::cephadm("labels", Some(other.display()), "labels are a list of strings"))
        }
    };
    let mut unique: Vec<String> = Vec::with_capacity(labels.len());
    for l in labels {
        if !unique.contains(&l) {
            unique.push(l);
        }
    }
    Ok(HostSpec { hostname, addr: with_port(&addr, port), labels: unique })
}

fn refused(key: &str, value: &Value, why: &str) -> FieldError {
    FieldError::stricter(key, Some(value.display()), why)
}

/// An address as an agent address: `port` added where none is given
/// (`10.0.0.5` -> `10.0.0.5:8741`, `fe80::1` -> `[fe80::1]:8741`,
/// `https://a` -> `https://a:8741`).
fn with_port(addr: &str, port: u16) -> String {
    if let Some((scheme, rest)) = addr.split_once("://") {
        return format!("{scheme}://{}", with_port(rest, port));
    }
    if addr.starts_with('[') {
        return if addr.contains("]:") { addr.to_string() } else { format!("{addr}:{port}") };
    }
    if addr.parse::<Ipv6Addr>().is_ok() {
        return format!("[{addr}]:{port}");
    }
    match addr.rsplit_once(':') {
        None => format!("{addr}:{port}"),
        // A port, or something malformed (`a:`, `a:8741/`) that the
        // address check refuses as it was written.
        Some(_) => addr.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::yaml11::load_all;

    fn read_yaml(text: &str) -> Result<HostSpec, SpecError> {
        let docs = load_all(text).unwrap();
        assert!(is_host_spec(&docs[0].value));
        read_host_spec(&docs[0].value, 0, docs[0].line, 8741)
    }

    #[test]
    fn a_cephadm_host_spec_reads_with_the_agents_port() {
        let h = read_yaml("service_type: host\nhostname: f5-422-01\naddr: 10.0.0.5\nlabels:\n- osd\n- osd\n- mon\n");
        assert_eq!(
            h.unwrap(),
            HostSpec {
                hostname: "f5-422-01".into(),
                addr: "10.0.0.5:8741".into(),
                labels: vec!["osd".into(), "mon".into()]
            }
        );
        let h = read_yaml("service_type: host\nhostname: f5-422-02\nlabels: osd\n").unwrap();
        assert_eq!((h.addr.as_str(), h.labels.as_slice()), ("f5-422-02:8741", ["osd".to_string()].as_slice()));
        let h = read_yaml("service_type: host\nhostname: a\naddr: 'https://a.example:9000'\n").unwrap();
        assert_eq!(h.addr, "https://a.example:9000");
        assert_eq!(read_yaml("service_type: host\nhostname: a\naddr: 'fe80::1'\n").unwrap().addr, "[fe80::1]:8741");
        assert_eq!(read_yaml("service_type: host\nhostname: a\naddr: 10.0.0.5:9\n").unwrap().addr, "10.0.0.5:9");
        assert_eq!(
            read_yaml("service_type: host\nhostname: a\naddr: 'a:'\n").unwrap().addr,
            "a:",
            "left for the check"
        );
        assert_eq!(
            read_yaml("service_type: host\nhostname: a\naddr: https://10.0.0.5\n").unwrap().addr,
            "https://10.0.0.5:8741"
        );
        assert_eq!(read_yaml("service_type: host\nhostname: a\naddr: '[fe80::1]'\n").unwrap().addr, "[fe80::1]:8741");
    }

    #[test]
    fn what_osdkeeper_cannot_do_is_refused_by_field() {
        for (yaml, field) in [
            ("service_type: host\naddr: 10.0.0.5\n", "hostname"),
            ("service_type: host\nhostname: 'a b'\n", "hostname"),
            ("service_type: host\nhostname: a\nlocation: {rack: r1}\n", "location"),
            ("service_type: host\nhostname: a\nstatus: maintenance\n", "status"),
            ("service_type: host\nhostname: a\nlabels: [1]\n", "labels"),
            ("service_type: host\nhostname: a\nadr: 10.0.0.5\n", "adr"),
        ] {
            let e = read_yaml(yaml).unwrap_err();
            assert_eq!(e.field, field, "{yaml}: {e}");
        }
        assert!(read_yaml("service_type: host\nhostname: a\nstatus: ''\n").is_ok());
    }
}
