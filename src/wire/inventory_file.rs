//! The inventory file `osdkeeper preview` reads (the format of
//! testbed/cephadm-oracle): `hosts` (host -> ceph-volume inventory list, in
//! the order hosts were added), and optional `labels`, `existing_daemons`
//! (service_id -> host -> count) and `osd_id_claims` (short host -> ids).

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use super::ceph_volume::parse_device_list;
use super::inventory_hosts::read_members;
use super::json_stream::{serde_message, JsonStream, Position, StreamError};
use crate::domain::inventory::{ClusterView, Device, HostInventory};
use crate::domain::value::excerpt;

/// Why an inventory file cannot be read. Positions are in the file; values
/// and host names are quoted as excerpts.
#[derive(Debug, thiserror::Error)]
pub enum InventoryFileError {
    #[error(transparent)]
    Stream(#[from] StreamError),
    #[error("host {:?}: {message}{}", excerpt(.host), at_text(.at))]
    Host { host: String, message: String, at: Option<Position> },
    #[error("{key}: {message}{}", at_text(.at))]
    Section { key: String, message: String, at: Option<Position> },
    #[error("the inventory must be a JSON object with a \"hosts\" mapping")]
    NotAnInventory,
}

fn at_text(at: &Option<Position>) -> String {
    at.map(|p| format!(" (at {p})")).unwrap_or_default()
}

/// The error serde_json found in `value`, which starts at `start` in the file.
fn in_value(e: &serde_json::Error, start: Position, value: &[u8]) -> (String, Option<Position>) {
    (serde_message(e), start.of_error_in_value(e, value))
}

/// Reads an inventory, host by host, keeping only what planning needs.
pub fn read_inventory<R: Read>(src: R) -> Result<ClusterView, InventoryFileError> {
    let mut s = JsonStream::new(src);
    if s.peek()? != Some(b'{') {
        return Err(InventoryFileError::NotAnInventory);
    }
    s.expect(b'{')?;
    let mut view = ClusterView::default();
    let mut labels: HashMap<String, Option<Vec<String>>> = HashMap::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut saw_hosts = false;
    if !s.at_close(b'}')? {
        loop {
            let key = s.string()?;
            s.expect(b':')?;
            match key.as_str() {
                "hosts" => {
                    saw_hosts = true;
                    if s.peek()? != Some(b'{') {
                        return Err(InventoryFileError::NotAnInventory);
                    }
                    s.expect(b'{')?;
                    for (host, devices) in read_hosts(&mut s)? {
                        match index.get(&host) {
                            Some(&i) => view.hosts[i].devices = Arc::new(devices),
                            None => {
                                index.insert(host.clone(), view.hosts.len());
                                view.hosts.push(HostInventory {
                                    name: host,
                                    labels: Vec::new(),
                                    devices: Arc::new(devices),
                                });
                            }
                        }
                    }
                }
                "labels" => labels = section(&mut s, &key)?,
                "existing_daemons" => {
                    let raw: Option<HashMap<String, Option<HashMap<String, u64>>>> = section(&mut s, &key)?;
                    view.existing_daemons =
                        raw.unwrap_or_default().into_iter().map(|(k, v)| (k, v.unwrap_or_default())).collect();
                }
                "osd_id_claims" => {
                    let raw: Option<HashMap<String, Vec<serde_json::Value>>> = section(&mut s, &key)?;
                    view.osd_id_claims = raw
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(h, ids)| {
                            let ids = ids
                                .into_iter()
                                .map(|v| match v {
                                    serde_json::Value::String(s) => s,
                                    other => other.to_string(),
                                })
                                .collect();
                            (h, ids)
                        })
                        .collect();
                }
                _ => {
                    s.value()?;
                }
            }
            if !s.next_member(b'}')? {
                break;
            }
        }
    }
    if !saw_hosts {
        return Err(InventoryFileError::NotAnInventory);
    }
    for h in &mut view.hosts {
        if let Some(Some(l)) = labels.remove(&h.name) {
            h.labels = l;
        }
    }
    Ok(view)
}

/// Reads the members of the `hosts` object (its `{` already consumed).
/// Windows of the file are read on a few threads (`inventory_hosts`); a
/// host the fast reading stops at is read here, in order, so that an error
/// names the host and its position in the file.
fn read_hosts<R: Read>(s: &mut JsonStream<R>) -> Result<Vec<(String, Vec<Device>)>, InventoryFileError> {
    if s.at_close(b'}')? {
        return Ok(Vec::new());
    }
    let threads = std::env::var("OSDKEEPER_PARSE_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(4));
    read_members(s, threads, |s| {
        let host = s.string()?;
        s.expect(b':')?;
        s.peek()?;
        let start = s.position();
        let bytes = s.value()?;
        match parse_device_list(bytes) {
            Ok(devices) => Ok((host, devices)),
            Err(e) => {
                let (message, at) = in_value(&e, start, bytes);
                Err(InventoryFileError::Host { host, message, at })
            }
        }
    })
}

fn section<T: serde::de::DeserializeOwned + Default, R: Read>(
    s: &mut JsonStream<R>,
    key: &str,
) -> Result<T, InventoryFileError> {
    s.peek()?;
    let start = s.position();
    let raw = s.value()?;
    let v: Option<T> = serde_json::from_slice(raw).map_err(|e| {
        let (message, at) = in_value(&e, start, raw);
        InventoryFileError::Section { key: key.to_string(), message, at }
    })?;
    Ok(v.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_host_order_and_extras() {
        let json = br#"{"hosts": {"b": [{"path": "/dev/sdb"}, {"path": "/dev/sda"}], "a": []},
            "labels": {"a": ["_no_schedule"]}, "existing_daemons": {"fast": {"b": 2}},
            "osd_id_claims": {"b": ["3", 4]}}"#;
        let v = read_inventory(&json[..]).unwrap();
        assert_eq!(v.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(&*v.hosts[0].devices[0].path, "/dev/sda", "sorted by path");
        assert!(!v.hosts[1].schedulable());
        assert_eq!(v.existing("fast", "b"), 2);
        assert_eq!(v.claims("b.example.com"), ["3", "4"]);
    }

    #[test]
    fn errors_name_the_host() {
        let err = read_inventory(&br#"{"hosts": {"h1": [{"path": 5}]}}"#[..]).unwrap_err();
        assert!(err.to_string().contains("h1"), "{err}");
        assert!(read_inventory(&b"[]"[..]).is_err());
    }

    #[test]
    fn errors_give_the_position_in_the_file() {
        let json = "{\"hosts\": {\n  \"h1\": [],\n  \"h2\": [\n    {\"path\": 5}\n  ]\n}}\n";
        let err = read_inventory(json.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("\"h2\"") && err.contains("line 4, column"), "{err}");
        let json = "{\"hosts\": {},\n \"labels\": {\"a\": 5}}";
        let err = read_inventory(json.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("labels") && err.contains("line 2, column"), "{err}");
        let json = "{\"hosts\": {\"h1\": []},\n\n \"labels\" {}}";
        let err = read_inventory(json.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("line 3, column 11"), "{err}");
    }

    fn plan(spec: &str, inventory: &str) -> crate::domain::plan::Preview {
        let docs = crate::domain::spec::parse_spec_file(spec).unwrap();
        crate::domain::plan::preview(&docs, &read_inventory(inventory.as_bytes()).unwrap())
    }

    #[test]
    fn plan_errors_quote_only_an_excerpt_of_huge_names() {
        let big = "x".repeat(100_000);
        let p = plan(
            "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\ndata_devices: {model: M}\n",
            &format!(r#"{{"hosts": {{"h{big}": [{{"path": "/dev/{big}", "available": true, "sys_api": {{}}}}]}}}}"#),
        );
        let shown = p.errors[0].to_string();
        assert!(shown.len() < 500, "{} bytes: {}", shown.len(), &shown[..300]);
    }

    #[test]
    fn huge_existing_daemon_counts_do_not_overflow() {
        let p = plan(
            "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\ndata_devices: {all: true, limit: 2}\n",
            r#"{"hosts": {"h1": [{"path": "/dev/sdb", "available": true}]},
                "existing_daemons": {"s": {"h1": 18446744073709551615}}}"#,
        );
        assert!(p.errors.is_empty() && p.rows.iter().all(|r| r.selection.data.is_empty()), "{:?}", p.errors);
    }

    #[test]
    fn a_path_listed_twice_refuses_the_host() {
        let json = br#"{"hosts": {"h1": [{"path": "/dev/sdb"}, {"path": "/dev/sdc"}, {"path": "/dev/sdb"}]}}"#;
        let err = read_inventory(&json[..]).unwrap_err().to_string();
        assert!(err.contains("\"h1\"") && err.contains("/dev/sdb") && err.contains("twice"), "{err}");
    }

    #[test]
    fn errors_quote_only_an_excerpt_of_huge_values() {
        let big = "x".repeat(100_000);
        for json in [
            format!(r#"{{"hosts": {{"h1": [{{"path": "/dev/x", "rejected_reasons": "{big}"}}]}}}}"#),
            format!(r#"{{"hosts": {{"{big}": [{{"path": 5}}]}}}}"#),
            format!(r#"{{"hosts": {{"h1": [{{"path": "/dev/{big}"}}, {{"path": "/dev/{big}"}}]}}}}"#),
            format!(r#"{{"hosts": {{}}, "labels": {{"a": "{big}"}}}}"#),
        ] {
            let err = read_inventory(json.as_bytes()).unwrap_err().to_string();
            assert!(err.len() < 500, "{} bytes: {}", err.len(), &err[..300]);
        }
    }
}
